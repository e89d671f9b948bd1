"""Builtins on awkward inputs (signed patterns, limits, values between two floats), run
end to end on the CPU device and on the checking device, against exact expected values
worked out from the OpenCL 1.2 specification."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from oracle import Shape, check_context, cpu_context, launch

DEVICES = [pytest.param(cpu_context, id="cpu"), pytest.param(check_context, id="check")]


def run(make_context: Any, source: str, *arrays: np.ndarray, items: int = 0) -> list[np.ndarray]:
    """Kernel ``k`` over ``items`` work-items (the first array's length by default); every
    array a buffer argument."""
    n = items or len(arrays[0])
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


CONVERT_SOURCE = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const {src} *x, __global float *rte, __global float *rtz,
                __global float *rtp, __global float *rtn) {{
    size_t i = get_global_id(0);
    rte[i] = convert_float_rte(x[i]);
    rtz[i] = convert_float_rtz(x[i]);
    rtp[i] = convert_float_rtp(x[i]);
    rtn[i] = convert_float_rtn(x[i]);
}}"""


def _float_neighbours(value: int) -> tuple[float, float]:
    """The floats just below and just above an integer that no float holds."""
    near = float(np.float32(value))
    if near > value:
        return float(np.nextafter(np.float32(near), np.float32(-np.inf))), near
    return near, float(np.nextafter(np.float32(near), np.float32(np.inf)))


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize("src", ["int", "uint", "long", "ulong"])
def test_integer_to_float_rounding_modes(make_context: Any, src: str) -> None:
    """convert_float_rt{z,p,n} of an integer between two floats picks the float below or
    above by the mode; the checking device rounded to nearest whatever the mode."""
    dtype = np.dtype({"int": np.int32, "uint": np.uint32, "long": np.int64,
                      "ulong": np.uint64}[src])
    info = np.iinfo(dtype)
    values = [16777217, 16777219, 123456789, info.max, info.max - 1]
    if info.min < 0:
        values += [-16777217, -123456789, int(info.min) + 1]
    x = np.array(values, dtype)
    outs = [np.zeros(len(x), np.float32) for _ in range(4)]
    _, rte, rtz, rtp, rtn = run(make_context, CONVERT_SOURCE.format(src=src), x, *outs)
    for i, value in enumerate(values):
        below, above = _float_neighbours(value)
        nearest = float(np.float32(value))
        assert rte[i] == nearest, value
        assert rtz[i] == (below if value > 0 else above), value
        assert rtp[i] == above, value
        assert rtn[i] == below, value


@pytest.mark.parametrize("make_context", DEVICES)
def test_double_to_float_rounding_modes(make_context: Any) -> None:
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    big = float(np.finfo(np.float32).max)
    x = np.array([1 + 2.0**-30, -(1 + 2.0**-30), 1e300, -1e300, tiny / 2, 0.1, np.inf, -0.0])
    outs = [np.zeros(len(x), np.float32) for _ in range(4)]
    _, rte, rtz, rtp, rtn = run(make_context, CONVERT_SOURCE.format(src="double"), x, *outs)
    up = float(np.nextafter(np.float32(1), np.float32(2)))
    tenth = float(np.float32(0.1))  # 0.1f lies above 0.1
    below_tenth = float(np.nextafter(np.float32(0.1), np.float32(0)))
    assert rte.tolist() == [1.0, -1.0, np.inf, -np.inf, 0.0, tenth, np.inf, -0.0]
    assert rtz.tolist() == [1.0, -1.0, big, -big, 0.0, below_tenth, np.inf, -0.0]
    assert rtp.tolist() == [up, -1.0, np.inf, -big, tiny, tenth, np.inf, -0.0]
    assert rtn.tolist() == [1.0, -up, big, -np.inf, 0.0, below_tenth, np.inf, -0.0]
    assert np.signbit(rtz[-1]) and np.signbit(rtn[-1])


@pytest.mark.parametrize("make_context", DEVICES)
def test_long_to_double_rounding_modes(make_context: Any) -> None:
    source = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void k(__global const long *x, __global double *o) {
        size_t i = get_global_id(0);
        o[4 * i] = convert_double_rte(x[i]);
        o[4 * i + 1] = convert_double_rtz(x[i]);
        o[4 * i + 2] = convert_double_rtp(x[i]);
        o[4 * i + 3] = convert_double_rtn(x[i]);
    }"""
    x = np.array([2**53 + 1, -(2**53 + 1), 2**63 - 1], np.int64)
    _, out = run(make_context, source, x, np.zeros(12))
    assert out.reshape(3, 4).tolist() == [
        [2.0**53, 2.0**53, 2.0**53 + 2, 2.0**53],
        [-2.0**53, -2.0**53, -2.0**53, -2.0**53 - 2],
        [2.0**63, 2.0**63 - 1024, 2.0**63, 2.0**63 - 1024]]


SIGNED_ZERO_SOURCE = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const {t} *x, __global const {t} *y, __global {t} *o) {{
    size_t i = get_global_id(0);
    {t} whole, floor_part;
    o[8 * i] = sign(x[i]);
    o[8 * i + 1] = fract(x[i], &floor_part);
    o[8 * i + 2] = floor_part;
    o[8 * i + 3] = modf(x[i], &whole);
    o[8 * i + 4] = whole;
    o[8 * i + 5] = nextafter(x[i], y[i]);
    o[8 * i + 6] = fdim(x[i], y[i]);
    o[8 * i + 7] = clamp(x[i], ({t})-1, ({t})2);
}}"""


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize("t", ["float", "double"])
def test_signed_zeros_neighbours_and_nan_of_common_and_math_functions(
        make_context: Any, t: str) -> None:
    """OpenCL 1.2 6.12.4 and 7.5.1: sign(-0) and fract(-0) are -0, fract(-inf) is -0, modf's
    fraction keeps the sign of x, nextafter steps in the argument's own type, fdim of a NaN
    is NaN, and float clamp is fmin(fmax(x, lo), hi) (a NaN gives lo)."""
    dtype = np.dtype(np.float32 if t == "float" else np.float64)
    tiny = dtype.type(np.finfo(dtype).smallest_subnormal)
    x = np.array([-0.0, -np.inf, -1.0, tiny, np.nan], dtype)
    y = np.array([1.0, 0.0, 0.0, 0.0, 1.0], dtype)
    _, _, out = run(make_context, SIGNED_ZERO_SOURCE.format(t=t), x, y, np.zeros(40, dtype))
    rows = out.reshape(5, 8)
    nan = float("nan")
    expected = [
        # sign, fract, floor, modf fraction, whole, nextafter, fdim, clamp
        [-0.0, -0.0, -0.0, -0.0, -0.0, tiny, 0.0, -0.0],
        [-1.0, -0.0, -np.inf, -0.0, -np.inf, -np.finfo(dtype).max, 0.0, -1.0],
        [-1.0, 0.0, -1.0, -0.0, -1.0, -np.nextafter(dtype.type(1), dtype.type(0)), 0.0, -1.0],
        [1.0, tiny, 0.0, tiny, 0.0, 0.0, tiny, tiny],
        [0.0, nan, nan, nan, nan, nan, nan, -1.0],
    ]
    want = np.array(expected, dtype)
    assert np.array_equal(rows, want, equal_nan=True), rows
    assert (np.signbit(rows) == np.signbit(want))[~np.isnan(want)].all(), rows


@pytest.mark.parametrize("make_context", DEVICES)
def test_hi_and_odd_of_three_component_vectors(make_context: Any) -> None:
    """OpenCL 1.2 6.1.7: .lo/.hi/.even/.odd of a 3-vector act on a 4-vector whose w is
    undefined; reading and assigning them is legal (the checking device failed with an
    internal IndexError). Only the defined components are checked."""
    source = """__kernel void k(__global const int *a, __global int *o) {
        size_t i = get_global_id(0);
        int3 v = vload3(i, a);
        int3 y = v;
        y.hi = (int2)(7, 8);
        int3 z = v;
        z.odd = (int2)(9, 10);
        int3 w = v;
        w.lo = v.hi;
        vstore3(y, 0, o + 12 * i);
        vstore3(z, 1, o + 12 * i);
        vstore3(w, 2, o + 12 * i);
        o[12 * i + 9] = v.hi.x;
        o[12 * i + 10] = v.odd.x;
        o[12 * i + 11] = v.even.y;
    }"""
    a = np.array([1, 2, 3, 4, 5, 6], np.int32)
    _, out = run(make_context, source, a, np.zeros(24, np.int32), items=2)
    rows = out.reshape(2, 12)
    for row, (x, y, z) in zip(rows, [(1, 2, 3), (4, 5, 6)]):
        assert row[:3].tolist() == [x, y, 7]
        assert row[3:6].tolist() == [x, 9, z]
        assert row[6] == z and row[8] == z
        assert row[9:].tolist() == [z, y, z]


EXPONENT_SOURCE = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const {t} *x, __global const {t} *y, __global {t} *o,
                __global int *n) {{
    size_t i = get_global_id(0);
    int quo;
    o[6 * i] = logb(x[i]);
    o[6 * i + 1] = remainder(x[i], y[i]);
    o[6 * i + 2] = remquo(x[i], y[i], &quo);
    o[6 * i + 3] = tgamma(x[i]);
    o[6 * i + 4] = erf(x[i]) + erfc(x[i]);
    o[6 * i + 5] = lgamma_r(x[i], &n[3 * i + 2]);
    n[3 * i] = ilogb(x[i]);
    n[3 * i + 1] = quo * islessgreater(x[i], y[i]);
}}"""


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize("t", ["float", "double"])
def test_exponent_remainder_and_gamma_functions(make_context: Any, t: str) -> None:
    """logb, ilogb, remainder, remquo, tgamma, erf, erfc, lgamma_r and islessgreater (the
    checking device stopped with 'does not implement' at each)."""
    dtype = np.dtype(np.float32 if t == "float" else np.float64)
    x = np.array([0.0, 10.0, -7.5, 5.0, np.inf, np.nan, -0.5], dtype)
    y = np.array([1.0, 4.0, 2.0, 2.0, 1.0, 1.0, -0.5], dtype)
    _, _, out, ints = run(make_context, EXPONENT_SOURCE.format(t=t), x, y,
                          np.zeros(42, dtype), np.zeros(21, np.int32))
    rows, n = out.reshape(7, 6), ints.reshape(7, 3)
    nan, inf = float("nan"), float("inf")
    int_min, int_max = -2**31, 2**31 - 1
    assert np.array_equal(rows[:, 0], np.array([-inf, 3, 2, 2, inf, nan, -1], dtype),
                          equal_nan=True)
    # the quotient rounds to nearest even: 10/4 = 2.5 -> 2, -7.5/2 -> -4, 5/2 = 2.5 -> 2
    assert np.array_equal(rows[:, 1], np.array([0, 2, 0.5, 1, nan, nan, 0], dtype),
                          equal_nan=True)
    assert np.array_equal(rows[:, 2], rows[:, 1], equal_nan=True)
    assert n[:, 0].tolist() == [int_min, 3, 2, 2, int_max, int_max, -1]
    # quotients 0, 2 (2.5 to even), -4 (-3.75), 2 (2.5 to even), -, -, 1; x == y gives 0
    assert n[1:4, 1].tolist() == [2, -4, 2] and n[6, 1] == 0
    gamma = [inf, 362880.0, math.gamma(-7.5), 24.0, inf, nan, math.gamma(-0.5)]
    assert np.allclose(rows[:, 3], np.array(gamma, dtype), rtol=1e-5, equal_nan=True)
    assert np.allclose(rows[:4, 4], 1.0) and rows[4, 4] == 1.0
    lgam = [inf, math.lgamma(10), math.lgamma(-7.5), math.lgamma(5), inf, nan,
            math.lgamma(-0.5)]
    assert np.allclose(rows[:, 5], np.array(lgam, dtype), rtol=1e-5, equal_nan=True)
    assert n[[1, 2, 3, 6], 2].tolist() == [1, 1, 1, -1]


@pytest.mark.parametrize("make_context", DEVICES)
def test_scalar_arguments_splat_to_vector_builtin_parameters(make_context: Any) -> None:
    # pow(color, 2.0f), copysign(1.0f, v), rotate(v, 3): the scalar widens to the vector type
    x = np.array([[1.5, -2.0, 3.0, -0.5]], np.float32)
    u = np.array([[1, 0x80000000, 7, 0xF0000000]], np.uint32)
    source = """__kernel void k(__global const float4 *x, __global float4 *p,
                                __global float4 *c, __global const uint4 *u, __global uint4 *r) {
        p[0] = pow(x[0] * x[0], 0.5f);
        c[0] = copysign(2.0f, x[0]) + fmin(1.0f, x[0]);
        r[0] = rotate(u[0], 3);
    }"""
    _, p, c, _, r = run(make_context, source, x, np.zeros_like(x), np.zeros_like(x), u,
                        np.zeros_like(u), items=1)
    assert p.tolist() == np.abs(x).tolist()
    assert c.tolist() == (np.copysign(2.0, x) + np.fmin(1.0, x)).tolist()
    assert r.tolist() == [[8, 4, 56, 0x80000007]]


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize("width", [2, 3, 4, 8, 16])
def test_signbit_of_every_float_vector_width(make_context: Any, width: int) -> None:
    """signbit on a float vector is -1 in the lanes with the sign bit set, zeros and NaNs
    included; gcc 12 stopped with an internal error on its two- and eight-lane float
    vectorization of the C library's signbit, so each width is built once here."""
    lanes = [-0.0, 0.0, -1.5, 2.0, -math.inf, math.inf, -math.nan, math.nan]
    x = np.array([lanes[i % len(lanes)] for i in range(16)], np.float32)
    source = f"""__kernel void k(__global const float *x, __global int *o) {{
        size_t i = get_global_id(0);
        vstore{width}(signbit(vload{width}(i, x)), i, o);
    }}"""
    _, out = run(make_context, source, x, np.zeros(16, np.int32), items=16 // width)
    used = (16 // width) * width
    expected = [-1 if math.copysign(1.0, float(v)) < 0 else 0 for v in x[:used]]
    assert out[:used].tolist() == expected


@pytest.mark.parametrize("make_context", DEVICES)
@pytest.mark.parametrize(("t", "dtype"), [("float", np.float32), ("double", np.float64)])
def test_normalize_of_a_vector_with_a_nan_is_all_nan(make_context: Any, t: str,
                                                     dtype: Any) -> None:
    """Section 6.12.5: any NaN element makes every element NaN, also beside an infinite
    element (whose rule turns the others into 0 * v[i], a NaN for a NaN) or beside zeros."""
    rows = np.array([[math.inf, 0.0, math.nan, 0.0], [0.0, math.nan, 0.0, 0.0],
                     [-math.inf, 2.0, 0.0, -0.0]], dtype)
    source = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
              f"__kernel void k(__global const {t}4 *x, __global {t}4 *o)\n"
              "{ size_t i = get_global_id(0); o[i] = normalize(x[i]); }")
    _, out = run(make_context, source, rows, np.zeros_like(rows))
    assert np.isnan(out[:2]).all()
    assert out[2].tolist() == [-1.0, 0.0, 0.0, 0.0]
    assert np.signbit(out[2]).tolist() == [True, False, False, True]


@pytest.mark.parametrize("make_context", DEVICES)
def test_double_length_and_normalize_neither_overflow_nor_underflow(make_context: Any) -> None:
    """The squares of these components overflow or underflow a double; the length and the
    unit vector do not."""
    big, tiny = np.finfo(np.float64).max, np.finfo(np.float64).smallest_subnormal
    rows = np.array([[big, big], [tiny, tiny], [3e-310, 4e-310]], np.float64)
    source = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void k(__global const double2 *x, __global double *len, __global double2 *unit)
    { size_t i = get_global_id(0); len[i] = length(x[i]); unit[i] = normalize(x[i]); }"""
    _, lengths, units = run(make_context, source, rows, np.zeros(3), np.zeros_like(rows))
    assert lengths[0] == np.inf  # sqrt(2) * DBL_MAX is beyond a double
    assert lengths[1] == tiny  # sqrt(2) * the least subnormal rounds back to it
    assert lengths[2] == pytest.approx(5e-310, rel=1e-9)
    half = math.sqrt(0.5)
    assert units[0].tolist() == pytest.approx([half, half], rel=1e-15)
    assert units[1].tolist() == pytest.approx([half, half], rel=1e-15)
    assert units[2].tolist() == pytest.approx([0.6, 0.8], rel=1e-9)
