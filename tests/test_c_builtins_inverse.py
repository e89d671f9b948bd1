"""Float inverse trigonometric and hyperbolic builtins and cbrt (``c_builtins_inverse.py``):
every float (or every 251st) against glibc's double functions rounded to float, C99's special
values, atan2 on pairs, and work-item loops calling each of them vectorized."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
from launch import build_kernel, run
from test_c_builtins import EXP_LOG_CHECK_C, CheckedFloatLib, assert_within_half_ulp, ov
from test_workgroup import _work_item_loops_vectorized

from ppcl.compiler.codegen.c_builtins import (
    TYPES_HEADER,
    c_builtin_definitions,
    c_builtin_name,
)

ONE_ARG = ("atan", "atanpi", "asin", "asinpi", "acos", "acospi", "sinh", "cosh", "tanh",
           "asinh", "acosh", "atanh", "erf", "erfc", "cbrt")
TWO_ARG = ("atan2", "atan2pi")
# the double references: glibc's, the pi forms divided by pi in double
REFS_C = """
static double ref_atanpi(double x) { return atan(x) / 0x1.921fb54442d18p+1; }
static double ref_asinpi(double x) { return asin(x) / 0x1.921fb54442d18p+1; }
static double ref_acospi(double x) { return acos(x) / 0x1.921fb54442d18p+1; }
"""
REF = {n: n for n in ONE_ARG} | {n: f"ref_{n}" for n in ("atanpi", "asinpi", "acospi")}
PAIRS_C = """
/* the scalar helper in a vectorizable loop and the float8 overload on the same pairs */
#define PPCL_T_PAIRS(name, scalar, vec8)                                                   \\
void t_pairs_##name(const float *y, const float *x, float *out, float *out8, long n) {  \\
    _Pragma("omp simd")                                                                 \\
    for (long i = 0; i < n; ++i) out[i] = scalar(y[i], x[i]);                           \\
    for (long i = 0; i + 8 <= n; i += 8) {                                              \\
        ppcl_float8 a, b, r;                                                            \\
        memcpy(&a, &y[i], sizeof a);                                                    \\
        memcpy(&b, &x[i], sizeof b);                                                    \\
        r = vec8(a, b);                                                                 \\
        memcpy(&out8[i], &r, sizeof r);                                                 \\
    }                                                                                   \\
}
"""


class InverseLib(CheckedFloatLib):
    """The float overloads (scalar and float8) with a checker per function, built by the CPU
    device's own compile (-O3 -march=native -fopenmp-simd, no contraction)."""

    def __init__(self) -> None:
        one = {n: (ov(n, "float"), ov(n, "float8")) for n in ONE_ARG}
        two = {n: (ov(n, "float", "float"), ov(n, "float8", "float8")) for n in TWO_ARG}
        checks = [f"PPCL_T_CHECK({n}, {c_builtin_name(s)}, {c_builtin_name(v)}, {REF[n]})"
                  for n, (s, v) in one.items()]
        pairs = [f"PPCL_T_PAIRS({n}, {c_builtin_name(s)}, {c_builtin_name(v)})"
                 for n, (s, v) in two.items()]
        overloads = [o for pair in [*one.values(), *two.values()] for o in pair]
        source = "\n".join([TYPES_HEADER.read_text(encoding="utf-8"),
                            c_builtin_definitions(overloads), EXP_LOG_CHECK_C, REFS_C, PAIRS_C,
                            *checks, *pairs])
        super().__init__(source)

    def pairs(self, name: str, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``name(y, x)`` elementwise; asserts that the float8 overload agrees."""
        y, x = np.ascontiguousarray(y, np.float32), np.ascontiguousarray(x, np.float32)
        out, out8 = np.zeros_like(y), np.zeros_like(y)
        ptr = ctypes.c_void_p
        getattr(self.dll, f"t_pairs_{name}")(ptr(y.ctypes.data), ptr(x.ctypes.data),
                                             ptr(out.ctypes.data), ptr(out8.ctypes.data),
                                             ctypes.c_long(len(y)))
        whole = len(y) // 8 * 8
        assert (out[:whole].view(np.uint32) == out8[:whole].view(np.uint32)).all(), name
        return out


@pytest.fixture(scope="module")
def inverse() -> InverseLib:
    return InverseLib()


SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, math.inf, -math.inf, math.nan, -math.nan, 1e-45, -1e-45,
     1.1754942e-38, -1.1754942e-38, 2.0, -2.0, 1.0000001, -1.0000001, 0.99999994, -0.99999994,
     0.50000006, 0.49999997, 0.26794922, 8.0, -27.0, 9.01, 10.0, 89.4, 89.5, -89.5, 90.0,
     3.4028235e38, -3.4028235e38, 1e-10, -1e-10, 2.9802322e-08, 1.7320508, 0.17157288], np.float32)


@pytest.mark.parametrize("name", ONE_ARG)
def test_special_values_exact(inverse: InverseLib, name: str) -> None:
    """Zeros with their sign, infinities, NaN, arguments at and past the domain limits, the
    edges of overflow and of the argument reductions: each bit for bit what glibc's double
    function gives rounded to float (C99 Annex F)."""
    for bits in SPECIALS.view(np.uint32).tolist():
        worst, misrounded, _ = inverse.check(name, bits, bits + 1)
        assert misrounded == 0 and worst == 0, (name, np.uint32(bits).view(np.float32))


@pytest.mark.parametrize("name", ONE_ARG)
def test_sampled_floats_correctly_rounded(inverse: InverseLib, name: str) -> None:
    """Every 251st float bit pattern (17 million, all binades and signs, NaNs included)."""
    assert_within_half_ulp(inverse, name, 251)


@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_ARG)
def test_every_float_correctly_rounded(inverse: InverseLib, name: str) -> None:
    """All 2^32 float bit patterns (``--run-slow``)."""
    assert_within_half_ulp(inverse, name, 1)


ATAN2_SPECIALS = np.array([0.0, -0.0, 1e-45, -1e-45, 0.75, -0.75, 1.0, -1.0, 3.0, -3.0,
                           3.4028235e38, -3.4028235e38, math.inf, -math.inf, math.nan],
                          np.float32)


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in ulps of the float format at the double ref (finite ref)."""
    _, e = np.frexp(ref)
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    return np.abs(got.astype(np.float64) - ref) / ulp


@pytest.mark.parametrize("name", TWO_ARG)
def test_atan2_quadrants_and_special_pairs(inverse: InverseLib, name: str) -> None:
    """Every pair of signed zeros, infinities, NaN and finite values of both signs: glibc's
    double atan2 (scaled by 1/pi) rounded to float, bit for bit (C99 F.9.1.4's quadrants)."""
    y = np.repeat(ATAN2_SPECIALS, len(ATAN2_SPECIALS))
    x = np.tile(ATAN2_SPECIALS, len(ATAN2_SPECIALS))
    got = inverse.pairs(name, y, x)
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    ref = (ref / math.pi if name == "atan2pi" else ref).astype(np.float32)
    same = (got.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(got) & np.isnan(ref))
    assert same.all(), [(a, b, g, r) for a, b, g, r, ok in zip(y, x, got, ref, same) if not ok]


@pytest.mark.parametrize("name", TWO_ARG)
def test_atan2_random_pairs_correctly_rounded(inverse: InverseLib, name: str) -> None:
    """A million pairs over all magnitudes and signs (and a quarter of them with nearby
    magnitudes, where the angle is near a multiple of pi/4): within a hair of half an ulp."""
    rng = np.random.default_rng(11)
    n = 1 << 20
    y = (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-149, 128, n))).astype(np.float32)
    x = (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-149, 128, n))).astype(np.float32)
    near = rng.random(n) < 0.25
    with np.errstate(over="ignore"):
        x[near] = (y[near] * rng.choice([-1.0, 1.0], n)[near]
                   * rng.uniform(0.5, 2.0, n)[near]).astype(np.float32)
    got = inverse.pairs(name, y, x)
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    ref = ref / math.pi if name == "atan2pi" else ref
    ulps = _ulps(got, ref)
    assert ulps.max() <= 0.501, (ulps.max(), y[ulps.argmax()], x[ulps.argmax()])
    assert np.count_nonzero(got != ref.astype(np.float32)) <= 10


def _erf(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x])


KERNEL = """
__kernel void f(__global const float *x, __global const float *y, __global float *o) {{
    int i = get_global_id(0);
    o[i] = {call};
}}
"""


@pytest.mark.parametrize("name", ONE_ARG + TWO_ARG)
def test_work_item_loop_calling_it_is_vectorized(name: str) -> None:
    """The functions are inline C through double, not libm calls, so the work-item loop
    around each vectorizes; the results are those of the library above."""
    call = f"{name}(x[i], y[i])" if name in TWO_ARG else f"{name}(x[i])"
    src = KERNEL.format(call=call)
    k = build_kernel(src, "f", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    libm = (name[:-2] if name.endswith("pi") else name) + "f("
    assert libm not in k.c_source
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.5, 1.5, 256).astype(np.float32) * (4 if "acosh" in name else 1)
    y = rng.uniform(-3, 3, 256).astype(np.float32)
    o = np.zeros_like(x)
    run(src, "f", (256,), (64,), x, y, o)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = {"atan": np.arctan(xd), "atanpi": np.arctan(xd) / np.pi, "asin": np.arcsin(xd),
               "asinpi": np.arcsin(xd) / np.pi, "acos": np.arccos(xd),
               "acospi": np.arccos(xd) / np.pi, "sinh": np.sinh(xd), "cosh": np.cosh(xd),
               "tanh": np.tanh(xd), "asinh": np.arcsinh(xd), "acosh": np.arccosh(xd),
               "atanh": np.arctanh(xd), "erf": _erf(xd), "erfc": 1.0 - _erf(xd), "cbrt": np.cbrt(xd), "atan2": np.arctan2(xd, yd),
               "atan2pi": np.arctan2(xd, yd) / np.pi}[name].astype(np.float32)
    np.testing.assert_array_max_ulp(o, ref, 1)
