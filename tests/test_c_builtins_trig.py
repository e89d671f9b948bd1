"""The float trigonometric builtins of the C backend (``c_builtins_trig.py``): every float bit
pattern (``--run-slow``; every 251st otherwise) against glibc's double functions or exactly
reduced long double ones, the special values OpenCL lists, ``sincos`` against ``sin`` and
``cos``, the float8 overloads against the scalar ones, and gcc vectorizing work-item loops that
call them."""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_c_builtins import EXP_LOG_CHECK_C, CheckedFloatLib, ov
from test_workgroup import _work_item_loops_vectorized, build_kernel, run

from ppcl.compiler.codegen.c_builtins import TYPES_HEADER, c_builtin_definitions, c_builtin_name
from ppcl.compiler.codegen.c_builtins_trig import two_over_pi_window

TRIG_FLOAT = ("sin", "cos", "tan", "sinpi", "cospi", "tanpi")
# OpenCL 1.2 section 7.4
BOUND = {"sin": 4, "cos": 4, "tan": 5, "sinpi": 4, "cospi": 4, "tanpi": 6}

# references: glibc's double sin, cos, tan (within an ulp of double); sinpi, cospi, tanpi
# reduced exactly (k = rint(2x), r = x - k/2) and evaluated in long double, with OpenCL's
# zeros: sinpi(n) of the sign of n, cospi(n + 1/2) = +0, tanpi = sinpi / cospi
REFS_C = """
static long double ref_pi_sc(double x, long double *c) {
    double k = rint(2.0 * x);
    long double r = (long double)(x - 0.5 * k) * 3.14159265358979323846264338327950288L;
    int q = (int)fmod(fabs(k), 4.0);
    if (k < 0) q = (4 - q) & 3;
    long double s = sinl(r), co = cosl(r);
    long double sv = q == 0 ? s : q == 1 ? co : q == 2 ? -s : -co;
    long double cv = q == 0 ? co : q == 1 ? -s : q == 2 ? -co : s;
    *c = cv == 0 ? 0.0L : cv;
    return sv == 0 ? copysignl(0.0L, x) : sv;
}
static double ref_sinpi(double x) {
    if (isinf(x)) return NAN;
    long double c;
    return (double)ref_pi_sc(x, &c);
}
static double ref_cospi(double x) {
    if (isinf(x)) return NAN;
    long double c;
    ref_pi_sc(x, &c);
    return (double)c;
}
static double ref_tanpi(double x) {
    if (isinf(x)) return NAN;
    long double c, s = ref_pi_sc(x, &c);
    return (double)(s / c);
}
"""

SINCOS_C = """
/* the bit patterns lo, lo + step, ... below hi where sincos (scalar, float8) differs from sin
   and cos */
long t_sincos_mismatches(unsigned long lo, unsigned long hi, unsigned long step) {
    long bad = 0;
    for (unsigned long v = lo; v < hi; v += 8 * step) {
        ppcl_float8 x8, c8, s8;
        for (int j = 0; j < 8; ++j) x8[j] = __ppcl_bits_float((unsigned int)(v + j * step));
        s8 = SINCOS8(x8, &c8);
        for (int j = 0; j < 8; ++j) {
            float c, s = SINCOS1(x8[j], &c);
            unsigned int want_s = __ppcl_float_bits(SIN1(x8[j]));
            unsigned int want_c = __ppcl_float_bits(COS1(x8[j]));
            bad += __ppcl_float_bits(s) != want_s || __ppcl_float_bits(c) != want_c;
            bad += __ppcl_float_bits(s8[j]) != want_s || __ppcl_float_bits(c8[j]) != want_c;
        }
    }
    return bad;
}
"""


class TrigLib(CheckedFloatLib):
    """The float trigonometric builtins with a checker per function, built by the CPU device's
    own compile (``toolchain.compile_shared``: -O3 -march=native -fopenmp-simd)."""

    def __init__(self) -> None:
        names = {n: (ov(n, "float"), ov(n, "float8")) for n in TRIG_FLOAT}
        sincos = (ov("sincos", "float", "*float"), ov("sincos", "float8", "*float8"))
        refs = {n: n if n in ("sin", "cos", "tan") else f"ref_{n}" for n in TRIG_FLOAT}
        checks = [f"PPCL_T_CHECK({n}, {c_builtin_name(s)}, {c_builtin_name(v)}, {refs[n]})"
                  for n, (s, v) in names.items()]
        macros = [f"#define SINCOS1 {c_builtin_name(sincos[0])}",
                  f"#define SINCOS8 {c_builtin_name(sincos[1])}",
                  f"#define SIN1 {c_builtin_name(names['sin'][0])}",
                  f"#define COS1 {c_builtin_name(names['cos'][0])}"]
        overloads = [o for pair in names.values() for o in pair] + list(sincos)
        source = "\n".join([TYPES_HEADER.read_text(encoding="utf-8"),
                            c_builtin_definitions(overloads), EXP_LOG_CHECK_C, REFS_C, *checks,
                            *macros, SINCOS_C])
        super().__init__(source)

    def sincos_mismatches(self, lo: int, hi: int, step: int) -> int:
        fn = self.dll.t_sincos_mismatches
        fn.restype = ctypes.c_long
        return fn(ctypes.c_ulong(lo), ctypes.c_ulong(hi), ctypes.c_ulong(step))


@pytest.fixture(scope="module")
def trig() -> TrigLib:
    return TrigLib()


def test_two_over_pi_windows() -> None:
    """A window times the significand gives the fraction of x 2/pi: checked against mpmath."""
    mp = pytest.importorskip("mpmath")
    mp.mp.prec = 400
    for x in (1.0, 3.0e4, 1e30, 3.4028235e38, 16777215.0 * 2.0 ** 80, 0.8):
        x = float(np.float32(x))
        m, e = math.frexp(x)
        field = e - 1 + 127
        sig = int(m * 2 ** 24)
        y = (sig * two_over_pi_window(field)) % (1 << 96) / mp.mpf(2) ** 94
        exact = mp.fmod(mp.mpf(x) * 2 / mp.pi, 4)
        assert abs(y - exact) < mp.mpf(2) ** -68, x


TRIG_SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, 0.25, -0.25, 0.75,
     2.5, -2.5, 1e-45, -1e-45, 1.1754942e-38, math.inf, -math.inf, math.nan, -math.nan,
     0.7853981, 0.78539819, 1.5707964, -1.5707964, 3.1415927, 1e30, -1e30, 3.4028235e38,
     -3.4028235e38, 8388607.5, 8388608.0, -8388609.0, 16777216.0, 16777218.0, -16777220.0,
     102940.97, 1.0e22, 16367173.0 * 2.0 ** 72,
     float.fromhex("0x1.f37c8ap+95")], np.float32)  # the float nearest a multiple of pi/2


@pytest.mark.parametrize("name", TRIG_FLOAT)
def test_float_trig_special_values_exact(trig: TrigLib, name: str) -> None:
    """Zeros (with their sign), infinities, NaN, integers and halves of the pi functions
    (OpenCL's signed zeros and infinities), huge arguments: each the reference rounded."""
    for bits in TRIG_SPECIALS.view(np.uint32).tolist():
        worst, misrounded, _ = trig.check(name, bits, bits + 1)
        assert misrounded == 0 and worst == 0, (name, np.uint32(bits).view(np.float32))


def _within_bound(trig: TrigLib, name: str, step: int, record: Callable[[str, object], None]
                  ) -> None:
    worst, misrounded, at = trig.check(name, 0, 1 << 32, step)
    record("worst_ulp", worst)  # in a --junitxml report
    record("misrounded", misrounded)
    # a double result about 2^-51 off misses the correct rounding only for floats whose true
    # value lies that close to half an ulp
    assert worst <= 0.501 < BOUND[name], f"{name}: {worst} ulp at {at!r}"
    assert misrounded <= (1 << 32) // step // 100_000, (name, misrounded)


@pytest.mark.parametrize("name", TRIG_FLOAT)
def test_float_trig_sampled_floats_correctly_rounded(trig: TrigLib, name: str,
                                                     record_property: Any) -> None:
    """Every 251st float bit pattern (17 million, all binades and sign bits, NaNs included)."""
    _within_bound(trig, name, 251, record_property)


@pytest.mark.slow
@pytest.mark.parametrize("name", TRIG_FLOAT)
def test_float_trig_every_float_correctly_rounded(trig: TrigLib, name: str,
                                                   record_property: Any) -> None:
    """All 2^32 float bit patterns (2 to 12 minutes per function; ``--run-slow``)."""
    _within_bound(trig, name, 1, record_property)


def test_sincos_is_sin_and_cos(trig: TrigLib) -> None:
    """Both results of sincos, scalar and float8, are bit for bit those of sin and cos."""
    assert trig.sincos_mismatches(0, 1 << 32, 4099) == 0


@pytest.mark.slow
def test_sincos_is_sin_and_cos_every_float(trig: TrigLib) -> None:
    assert trig.sincos_mismatches(0, 1 << 32, 1) == 0


def _helper_body(name: str) -> str:
    text = c_builtin_definitions([ov(name, "float")])
    start = text.index("{", text.index(f"__ppcl_s_{name}_float_float("))
    return text[start:text.index("\n}\n", start)]


def test_native_and_half_forms_are_the_precise_ones() -> None:
    """native_ and half_ sin, cos and tan are the vectorizable precise functions."""
    for base in ("sin", "cos", "tan"):
        for prefix in ("native_", "half_"):
            body = _helper_body(prefix + base)
            assert body == _helper_body(base) and f"{base}f(" not in body


TRIG_KERNEL = """
__kernel void trig(__global const float *x, __global float *y) {
    int i = get_global_id(0);
    float c;
    float s = sincos(x[i], &c);
    y[i] = sin(x[i]) + cos(2.0f * x[i]) + 0.25f * tan(x[i]) + s * c
         + sinpi(x[i]) - cospi(x[i]) + 0.125f * tanpi(x[i] * 0.1f) + native_sin(x[i]);
}
"""


def test_work_item_loop_calling_trig_is_vectorized() -> None:
    """The float trigonometric functions are inline C, not libm calls, so the work-item loop
    around them still vectorizes."""
    k = build_kernel(TRIG_KERNEL, "trig", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    assert "sinf(" not in k.c_source and "cosf(" not in k.c_source
    x = np.random.default_rng(0).uniform(-40, 40, 256).astype(np.float32)
    x[:4] = [1e30, -1e38, 0.0, 2.5]
    y = np.zeros_like(x)
    run(TRIG_KERNEL, "trig", (256,), (64,), x, y)
    xd = x.astype(np.float64)
    half_turns = xd - 2.0 * np.rint(xd / 2.0)  # exact: sinpi and cospi of 1e30 are 0 and 1
    tenth = (x * np.float32(0.1)).astype(np.float64)
    ref = (np.sin(xd) + np.cos(2.0 * xd) + 0.25 * np.tan(xd) + np.sin(xd) * np.cos(xd)
           + np.sin(np.pi * half_turns) - np.cos(np.pi * half_turns)
           + 0.125 * np.tan(np.pi * (tenth - np.rint(tenth))) + np.sin(xd))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
