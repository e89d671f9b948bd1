"""The checking device's float builtins give the values section 7.5.1 of OpenCL 1.2 names
for special arguments, and the correctly rounded fma, as the CPU device does: a kernel
relying on them gets the same answer on both."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from oracle import Shape, check_context, cpu_context, launch

import ppcl as cl

DEVICES = [pytest.param(check_context, id="check"), pytest.param(cpu_context, id="cpu")]
FLOATS = [pytest.param(np.float32, "float", id="float"),
          pytest.param(np.float64, "double", id="double")]


def _unary(context: Callable[[], cl.Context], type_name: str, name: str,
           x: np.ndarray) -> np.ndarray:
    source = (f"__kernel void f(__global {type_name} *out, __global const {type_name} *x)\n"
              f"{{ size_t i = get_global_id(0); out[i] = {name}(x[i]); }}\n")
    out, _ = launch(context(), source, "f", Shape((len(x),), (1,)), [np.zeros_like(x), x])
    return out


def _same_bits(have: np.ndarray, want: list[float], dtype: Any) -> None:
    expected = np.array(want, dtype=dtype)
    assert (np.isnan(have) == np.isnan(expected)).all(), (have, expected)
    numbers = ~np.isnan(expected)
    assert (have[numbers] == expected[numbers]).all(), (have, expected)
    assert (np.signbit(have[numbers]) == np.signbit(expected[numbers])).all(), (have, expected)


@pytest.mark.parametrize("context", DEVICES)
@pytest.mark.parametrize(("dtype", "type_name"), FLOATS)
def test_pi_functions_are_exact_at_whole_and_half_numbers(context: Any, dtype: Any,
                                                          type_name: str) -> None:
    x = np.array([1.0, -1.0, 2.0, -3.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e5], dtype)
    _same_bits(_unary(context, type_name, "sinpi", x),
               [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, -1.0, 1.0, -1.0, 0.0], dtype)
    _same_bits(_unary(context, type_name, "cospi", x),
               [-1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], dtype)
    inf = np.inf
    _same_bits(_unary(context, type_name, "tanpi", x),
               [-0.0, 0.0, 0.0, 0.0, inf, -inf, -inf, inf, -inf, 0.0], dtype)


@pytest.mark.parametrize("context", DEVICES)
def test_powr_is_undefined_outside_its_domain(context: Any) -> None:
    source = """__kernel void f(__global float *out, __global const float *x,
                                 __global const float *y)
    { size_t i = get_global_id(0); out[i] = powr(x[i], y[i]); }"""
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, 1.0, -2.0, -0.0, 0.0, 4.0, 1.0], np.float32)
    y = np.array([0.0, -0.0, 0.0, inf, 2.0, -1.0, 3.0, 0.5, nan], np.float32)
    out, _, _ = launch(context(), source, "f", Shape((len(x),), (1,)),
                       [np.zeros_like(x), x, y])
    _same_bits(out, [nan, nan, nan, nan, nan, inf, 0.0, 2.0, nan], np.float32)


@pytest.mark.parametrize("context", DEVICES)
@pytest.mark.parametrize(("dtype", "type_name"), FLOATS)
def test_rootn_of_a_negative_number(context: Any, dtype: Any, type_name: str) -> None:
    source = (f"__kernel void f(__global {type_name} *out, __global const {type_name} *x,\n"
              "                 __global const int *n)\n"
              "{ size_t i = get_global_id(0); out[i] = rootn(x[i], n[i]); }")
    inf, nan = np.inf, np.nan
    x = np.array([-8.0, -32.0, -0.0, -0.0, -4.0, -inf, 8.0, 1e-300 if dtype is np.float64
                  else 1e-30], dtype)
    n = np.array([3, -5, -3, 2, 2, 4, 0, 3], np.int32)
    out, _, _ = launch(context(), source, "f", Shape((len(x),), (1,)),
                       [np.zeros_like(x), x, n])
    _same_bits(out[:7], [-2.0, -0.5, -inf, 0.0, nan, nan, nan], dtype)
    cube_root = np.cbrt(x[7:].astype(np.float64)).astype(dtype)
    assert abs(out[7] - cube_root[0]) <= 4 * np.spacing(cube_root[0])


@pytest.mark.parametrize("context", DEVICES)
def test_double_fma_keeps_the_rounding_error_of_a_product(context: Any) -> None:
    """fma(a, b, -p) with p the rounded a * b is that rounding error exactly (the error-free
    product of double-double arithmetic), not zero."""
    source = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void f(__global double *err, __global const double *a, __global const double *b)
    {
        size_t i = get_global_id(0);
        double p = a[i] * b[i];
        err[i] = fma(a[i], b[i], -p);
    }"""
    a = np.array([1.0 + 2.0 ** -30, 3.0 + 2.0 ** -50, 1e300, 0.1], np.float64)
    b = np.array([1.0 + 2.0 ** -30, 1.0 / 3.0, -1e-10, 0.1], np.float64)
    err, _, _ = launch(context(), source, "f", Shape((len(a),), (1,)), [np.zeros_like(a), a, b])
    for i in range(len(a)):
        product = Fraction(a[i]) * Fraction(b[i])
        want = float(product - Fraction(a[i] * b[i]))
        assert err[i] == want, (i, err[i], want)
