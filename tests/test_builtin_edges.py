"""Builtins on awkward inputs (signed patterns, limits, values between two floats), run
end to end on the CPU device and on the checking device, against exact expected values
worked out from the OpenCL 1.2 specification."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from oracle import Shape, check_context, cpu_context, launch

DEVICES = [pytest.param(cpu_context, id="cpu"), pytest.param(check_context, id="check")]


def run(make_context: Any, source: str, *arrays: np.ndarray) -> list[np.ndarray]:
    """Kernel ``k`` over the first array's length; every array a buffer argument."""
    n = len(arrays[0])
    return launch(make_context(), source, "k", Shape((n,), (1,)), arrays)


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize("t", ["char", "short", "int", "long"])
def test_popcount_counts_the_bits_of_negative_values(make_context: Any, t: str) -> None:
    dtype = np.dtype({"char": np.int8, "short": np.int16, "int": np.int32, "long": np.int64}[t])
    bits = dtype.itemsize * 8
    x = np.array([0, 1, -1, -2, -3, np.iinfo(dtype).min, np.iinfo(dtype).max], dtype)
    source = f"""__kernel void k(__global const {t} *x, __global {t} *o, __global {t}4 *v) {{
        size_t i = get_global_id(0);
        o[i] = popcount(x[i]);
        v[i] = popcount(({t}4)(x[i]));
    }}"""
    _, scalar, vector = run(make_context, source, x, np.zeros_like(x),
                            np.zeros((len(x), 4), dtype))
    expected = np.array([0, 1, bits, bits - 1, bits - 1, 1, bits - 1], dtype)
    assert scalar.tolist() == expected.tolist()
    assert vector.tolist() == np.repeat(expected[:, None], 4, axis=1).tolist()
