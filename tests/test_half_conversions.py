"""Conversions between half and float on the CPU device (``vstore_half*``, ``vload_half*``):
written without branches so that the loops around them vectorize, and still exact: every
sampled float stored as a half in each rounding mode is the half the mode picks, and every
half loads as its float."""

from __future__ import annotations

import numpy as np
import pytest
from launch import build_kernel, run
from test_workgroup import _work_item_loops_vectorized

STORE = """
__kernel void store(__global const float *x, __global half *h)
{
    size_t i = get_global_id(0);
    vstore_half%s(x[i], i, h);
}
"""

LOAD = """
__kernel void load(__global const half *h, __global float *x)
{
    size_t i = get_global_id(0);
    x[i] = vload_half(i, h);
}
"""

def _sampled_floats() -> np.ndarray:
    """Every 251st float bit pattern (all binades, both signs, NaNs), every float around the
    half range's edges (denormals, the largest half, the overflow threshold)."""
    bits = np.arange(0, 1 << 32, 251, dtype=np.uint64).astype(np.uint32)
    edges = [np.arange(v - 4096, v + 4096, dtype=np.uint32) for v in
             (0x33000000, 0x38800000, 0x477fe000, 0x477ff000, 0x387fc000)]
    bits = np.concatenate([bits, *edges, *(e | np.uint32(0x80000000) for e in edges)])
    return bits[: len(bits) // 256 * 256].view(np.float32)


def _expected(x: np.ndarray, mode: str) -> np.ndarray:
    """The half bit patterns of ``x`` rounded by ``mode``, from numpy's round-to-nearest-even
    conversion and the neighbouring half; NaNs quiet with their payload's top bits."""
    with np.errstate(all="ignore"):
        nearest = x.astype(np.float16)
        exact = nearest.astype(np.float64) == x.astype(np.float64)
        above = nearest.astype(np.float64) > x.astype(np.float64)
        hi = np.where(above, nearest, np.nextafter(nearest, np.float16(np.inf)))
        lo = np.where(above, np.nextafter(nearest, np.float16(-np.inf)), nearest)
    chosen = {"": nearest, "_rte": nearest, "_rtp": hi, "_rtn": lo,
              "_rtz": np.where(x > 0, lo, hi)}[mode]
    result = np.where(exact, nearest, chosen).view(np.uint16)
    bits = x.view(np.uint32)
    nan = ((bits >> 16) & 0x8000) | 0x7E00 | ((bits >> 13) & 0x3FF)
    return np.where(np.isnan(x), nan.astype(np.uint16), result)


@pytest.mark.parametrize("mode", ["", "_rte", "_rtz", "_rtp", "_rtn"])
def test_floats_stored_as_halves_round_by_the_mode(mode: str) -> None:
    x = _sampled_floats()
    h = np.zeros(len(x), np.uint16)
    run(STORE % mode, "store", (len(x),), (256,), x, h)
    want = _expected(x, mode)
    wrong = np.flatnonzero(h != want)
    assert len(wrong) == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(h[i])), hex(int(want[i])))
                             for i in wrong[:5]]


def test_every_half_loads_as_its_float() -> None:
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = np.zeros(len(h), np.float32)
    run(LOAD, "load", (len(h),), (256,), h, x)
    want = h.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(x.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("source, name", [(STORE % "", "store"), (STORE % "_rtz", "store"),
                                          (LOAD, "load")])
def test_loops_converting_halves_vectorize(source: str, name: str) -> None:
    kernel = build_kernel(source, name, local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(kernel), kernel.vector_report
