"""Float inverse trigonometric and hyperbolic functions, and ``cbrt``, as branch-free C that gcc
vectorizes: ``atan``, ``atanpi``, ``atan2``, ``atan2pi``, ``asin``, ``asinpi``, ``acos``,
``acospi``, ``sinh``, ``cosh``, ``tanh``, ``asinh``, ``acosh``, ``atanh``, ``erf``, ``erfc``,
``cbrt``.

glibc's ``atanf``, ``tanhf``... are opaque calls that keep a work-item loop scalar. These
compute in double and round once to float, like ``c_builtins_explog.py``, whose double
kernels (``2^r - 1`` and ``2 atanh(s)``) they reuse:

- ``atan``: ``b = |x|`` or ``1/|x|`` (then ``atan = pi/2 - atan b``), so b is in [0, 1]; above
  ``2 - sqrt 3`` it is moved by ``atan b = pi/6 + atan t``, ``t = (b sqrt 3 - 1) / (b + sqrt 3)``,
  so |t| <= 2 - sqrt 3 and ``atan t = t A(t^2)``. ``atan2`` divides the smaller magnitude by
  the larger (exact to 2^-53 in double, no overflow) and places the angle in its quadrant by
  ``pi/2 - r`` and ``pi - r``; the ``pi`` forms use the same steps with the constants 1/2 and 1
  and the kernel scaled by 1/pi, so their exact cases (``atan2pi(0, -0) = 1``) stay exact.
- ``asin``, ``acos``: for |x| <= 1/2, ``asin x = x S(x^2)``; above, ``asin x = pi/2 - 2 asin t``
  with ``t = sqrt((1 - |x|) / 2)``, where ``t^2`` is exact, and ``acos`` is ``2 asin t`` or
  ``pi - 2 asin t``; near 1 ``acos`` keeps its relative accuracy.
- ``tanh``, ``sinh``, ``cosh`` from ``m = e^|x| - 1`` (explog's kernel, relative error about
  2^-46, no cancellation near 0): ``tanh = m2 / (m2 + 2)`` with ``m2 = e^(2|x|) - 1``,
  ``sinh = (m + m / (m + 1)) / 2``, ``cosh = ((m + 1) + 1 / (m + 1)) / 2``; the kernel's clamp
  of its argument gives 1 and inf for large |x|.
- ``asinh``, ``acosh``, ``atanh`` as ``log1p(d)`` of a double d: ``d = |x| + x^2 / (h + 1)``
  with ``h = sqrt(x^2 + 1)``, ``d = (x - 1) + sqrt((x - 1)(x + 1))``, ``d = 2|x| / (1 - |x|)``,
  each a sum of non-negative terms. ``log1p(d)`` is ``k ln 2 + 2 atanh(s)`` with ``1 + d =
  2^k m`` (m in [sqrt(1/2), sqrt 2)), ``s = (m - 1) / (m + 1)``, or ``s = d / (d + 2)`` when
  k = 0, which keeps d's accuracy near 0.
- ``erf``, ``erfc``: for |x| < 1, ``erf x = x E(x^2)`` and ``erfc x = 1 - erf x``; above,
  ``erfc a = e^(-a^2) G(t)`` with ``t = 1 / (1 + 0.35 a)`` (a = |x|, a^2 exact, the exponential
  explog's kernel), ``erf = 1 - erfc`` and ``erfc(-a) = 2 - erfc a``; past a = 10.1 erfc is 0
  in float.
- ``cbrt``: a first guess from the double's exponent bits divided by 3 (relative error below
  3.4%), three Halley steps ``y (y^3 + 2a) / (2 y^3 + a)`` (each cubes the error).

A and S are Chebyshev fits (``mpmath.chebyfit`` at 50 digits) of ``atan(sqrt u) / sqrt u`` on
[0, (2 - sqrt 3)^2] (degree 8, error 2^-55.8) and ``asin(sqrt u) / sqrt u`` on [0, 1/4]
(degree 11, error 2^-51.7), E of ``erf(sqrt u) / sqrt u`` on [0, 1] (degree 10) and G of
``erfc(x) e^(x^2)`` as a function of t on [1 / 4.535, 1 / 1.35] (degree 16; relative errors
2^-50.8 and 2^-53.3 after rounding the coefficients to double). Every double result is within about 2^-45
relative of the true value, so the float is the correctly rounded one but where the true value
lies that close to a rounding boundary, never more than a hair over half an ulp off (OpenCL 1.2
allows 2 to 6 ulp). ``tests/test_c_builtins_inverse.py`` checks every float bit pattern with
``--run-slow`` (every 251st without) against glibc's double functions, and atan2 on every pair
of special values and random pairs. C99 Annex F's special values (signed zeros, infinities,
NaN, the domain limits, atan2's quadrants) are selects at the end.
"""

from __future__ import annotations

from ppcl.compiler.codegen.c_builtins_emit import Emitter, function
from ppcl.compiler.codegen.c_builtins_explog import (
    LN2,
    LOG2_E,
    define_madd,
    exp2m1_parts,
    horner,
    log_series,
    odd_series,
)
from ppcl.compiler.ir.types import DOUBLE

INVERSE_TRIG = ("atan", "atanpi", "asin", "asinpi", "acos", "acospi", "atan2", "atan2pi")
HYPERBOLIC = ("sinh", "cosh", "tanh", "asinh", "acosh", "atanh")
INVERSE = INVERSE_TRIG + HYPERBOLIC + ("erf", "erfc", "cbrt")

# atan(sqrt u) / sqrt u on [0, (2 - sqrt 3)^2], highest degree first
_ATAN_A = ("0x1.6b870caf056c3p-5", "-0x1.09891d04a230ap-4", "0x1.3a8b89d80f6d2p-4",
           "-0x1.74576bc653429p-4", "0x1.c71c4e0ede3b2p-4", "-0x1.249248e5248d9p-3",
           "0x1.99999999287c7p-3", "-0x1.55555555552e7p-2", "0x1.0000000000000p+0")
# asin(sqrt u) / sqrt u on [0, 1/4], highest degree first
_ASIN_S = ("0x1.02164e3a1cbbdp-5", "-0x1.7f2cb032de5f3p-7", "0x1.2b1cc4488d698p-6",
           "0x1.333f8f79fa40bp-7", "0x1.d56064c12e4ddp-7", "0x1.1baaecd577501p-6",
           "0x1.6e9740e30dbfep-6", "0x1.f1c697a184bcap-6", "0x1.6db6dd2b73e9ap-5",
           "0x1.3333333031706p-4", "0x1.55555555575c2p-3", "0x1.ffffffffffffep-1")
# erf(sqrt u) / sqrt u on [0, 1], highest degree first
_ERF_P = ("0x1.43f6d0dee7032p-27", "-0x1.462a758d4591dp-23", "0x1.b5d3ea9fd0b5ap-20",
          "-0x1.f4684782919e8p-17", "0x1.f99c295886f05p-14", "-0x1.c02d67e37081ep-11",
          "0x1.565bcb082cca2p-8", "-0x1.b82ce3026aae0p-6", "0x1.ce2f21a000d30p-4",
          "-0x1.812746b037352p-2", "0x1.20dd750429b6bp+0")
# erfc(x) e^(x^2) at x = (1/t - 1) / ERFC_P for x in [1, ERFC_TOP], highest degree first
_ERFC_G = ("-0x1.e61d0dc0afd48p-7", "0x1.c7ceca18aa37ap-4", "-0x1.767b7e1876821p-2",
           "0x1.5eef320fe0f1fp-1", "-0x1.a0fb96e055e60p-1", "0x1.5c2ecd6229167p-1",
           "-0x1.cd505ef2522e8p-2", "0x1.aae26c38a58c4p-3", "-0x1.0449bf3f5cbc3p-4",
           "0x1.271138d360981p-4", "0x1.517b66ac8a422p-4", "0x1.0629aaaecb815p-3",
           "0x1.49dfa3b85f289p-3", "0x1.7ba91dc58f838p-3", "0x1.9468f69c66b59p-3",
           "0x1.94693f677f932p-3", "-0x1.985b7d6dfd172p-34")
ERFC_P = "0.35"
ERFC_TOP = "10.1"  # erfc is below half the smallest float denormal from here on
PI = "0x1.921fb54442d18p+1"
PI_2 = "0x1.921fb54442d18p+0"
PI_6 = "0x1.0c152382d7366p-1"
INV_PI = "0x1.45f306dc9c883p-2"
SQRT3 = "0x1.bb67ae8584caap+0"
TWO_MINUS_SQRT3 = "0x1.126145e9ecd56p-2"
SQRT_HALF_HI = "0x3fe6a09e"  # high word of the double just below sqrt(1/2)


def _angles(name: str) -> tuple[str, str, str]:
    """(half turn, quarter turn, scale of the kernel) of an inverse trigonometric function:
    radians, or the ``pi`` forms' half turns."""
    if name.endswith("pi"):
        return "1.0", "0.5", INV_PI
    return PI, PI_2, "1.0"


def _atan_unit(e: Emitter) -> str:
    """``double __ppcl_h_atan_unit(double b)``: atan b for b in [0, 1]."""
    name = "__ppcl_h_atan_unit"
    m = define_madd(e)

    def make() -> str:
        return function("double", name, (DOUBLE,), ("b",), f"""
int mid = b > {TWO_MINUS_SQRT3};
double t = mid ? {m}(b, {SQRT3}, -1.0) / (b + {SQRT3}) : b;
double u = t * t;
{horner(m, _ATAN_A, "u")}
return {m}(t, p, mid ? {PI_6} : 0.0);
""")

    return e.define(name, make)


def _asin_unit(e: Emitter) -> str:
    """``double __ppcl_h_asin_unit(double t, double u)``: asin t for t in [0, 1/2], u = t^2."""
    name = "__ppcl_h_asin_unit"
    m = define_madd(e)

    def make() -> str:
        return function("double", name, (DOUBLE, DOUBLE), ("t", "u"), f"""
{horner(m, _ASIN_S, "u")}
return t * p;
""")

    return e.define(name, make)


def _expm1_double(e: Emitter) -> str:
    """``double __ppcl_h_expm1_d(double a)``: e^a - 1, a >= 0 (clamped where 2^130 is
    reached: the float results are 1 or inf there)."""
    name = "__ppcl_h_expm1_d"
    m, parts = define_madd(e), exp2m1_parts(e)

    def make() -> str:
        # the select keeps small arguments exact, as explog's expm1 does
        return function("double", name, (DOUBLE,), ("a",), f"""
double scale;
double q = {parts}(a * {LOG2_E}, &scale);
return scale == 1.0 ? q : {m}(scale, q, scale - 1.0);
""")

    return e.define(name, make)


def _log1p_double(e: Emitter) -> str:
    """``double __ppcl_h_log1p_d(double d)``: log(1 + d) for finite d >= 0, NaN for NaN
    (other d give garbage, replaced by the callers' selects)."""
    name = "__ppcl_h_log1p_d"
    m, series = define_madd(e), log_series(e)

    def make() -> str:
        # k from the high word: 32-bit integer lanes, as explog's float logarithm has them
        return function("double", name, (DOUBLE,), ("d",), f"""
double w = 1.0 + d;
unsigned long iw = __ppcl_double_bits(w);
int k = ((int)(unsigned int)(iw >> 32) - {SQRT_HALF_HI}) >> 20;
double mw = __ppcl_bits_double(iw - ((unsigned long)(unsigned int)k << 52));
double s = k == 0 ? d / (d + 2.0) : (mw - 1.0) / (mw + 1.0);
double r = {m}((double)k, {LN2}, {series}(s));
return d == d ? r : d;  /* a NaN's bits make a finite m */
""")

    return e.define(name, make)


def _cbrt_double(e: Emitter) -> str:
    """``double __ppcl_h_cbrt_d(double a)``: the cube root of a positive normal double."""
    name = "__ppcl_h_cbrt_d"

    def make() -> str:
        # the biased exponent (plus fraction bits) divided by 3, rebiased: 1023 * 2/3 in the
        # high word is 0x2aa00000; 0x2a9f8000 centres the guess's error (-2.9% to +3.4%)
        halley = "y = y * (y3 + 2.0 * a) / (2.0 * y3 + a);"
        steps = "\n".join(f"y3 = y * y * y;\n{halley}" for _ in range(3))
        return function("double", name, (DOUBLE,), ("a",), f"""
unsigned int hi = (unsigned int)(__ppcl_double_bits(a) >> 32);
double y = __ppcl_bits_double((unsigned long)(hi / 3u + 0x2a9f8000u) << 32);
double y3;
{steps}
return y;
""")

    return e.define(name, make)


def _erf_small(e: Emitter) -> str:
    """``double __ppcl_h_erf_small(double a)``: erf a for a in [0, 1], odd in a."""
    return odd_series(e, "__ppcl_h_erf_small", _ERF_P)


def _erfc_big(e: Emitter) -> str:
    """``double __ppcl_h_erfc_big(double a)``: erfc a for a >= 1 (0 for a past ERFC_TOP and
    at inf), NaN for NaN."""
    name = "__ppcl_h_erfc_big"
    m, parts = define_madd(e), exp2m1_parts(e)

    def make() -> str:
        return function("double", name, (DOUBLE,), ("a",), f"""
a = a > {ERFC_TOP} ? {ERFC_TOP} : a;
double t = 1.0 / {m}(a, {ERFC_P}, 1.0);
{horner(m, _ERFC_G, "t")}
double scale;
double q = {parts}(-(a * a) * {LOG2_E}, &scale);  /* a * a is exact */
double r = {m}(scale, q, scale) * p;
return a == {ERFC_TOP} ? 0.0 : r;  /* NaN stays */
""")

    return e.define(name, make)


def _erf_body(e: Emitter, name: str, x: str) -> str:
    small, big = _erf_small(e), _erfc_big(e)
    head = f"""double a = fabs((double){x});
double s = {small}(a < 1.0 ? a : 0.0);
double c = {big}(a < 1.0 ? 1.0 : a);
"""
    if name == "erf":
        return head + f"""return copysignf((float)(a < 1.0 ? s : 1.0 - c), {x});"""
    return head + f"""double r = a < 1.0 ? 1.0 - copysign(s, (double){x}) : c;
return (float)({x} < 0.0f && a >= 1.0 ? 2.0 - c : r);"""


def _atan_body(e: Emitter, name: str, x: str) -> str:
    _, quarter, scale = _angles(name)
    unit = _atan_unit(e)
    return f"""double a = fabs((double){x});
int inv = a > 1.0;
double r = {unit}(inv ? 1.0 / a : a) * {scale};
r = inv ? {quarter} - r : r;  /* also atan(+-inf) */
return copysignf((float)r, {x});  /* -0 stays, NaN passes */"""


def _atan2_body(e: Emitter, name: str, y: str, x: str) -> str:
    half, quarter, scale = _angles(name)
    unit = _atan_unit(e)
    # C99 F.9.1.4: both zero give q = 0, both infinite q = 1, one infinite q = 0; x's sign bit
    # (also -0) picks the left half plane, y's sign bit the lower one
    return f"""double ax = fabs((double){x}), ay = fabs((double){y});
double mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
double q = ax == ay ? 1.0 : mn / mx;
q = mx == 0.0 ? 0.0 : q;
double r = {unit}(q) * {scale};
r = ay > ax ? {quarter} - r : r;
r = signbit({x}) ? {half} - r : r;
float f = copysignf((float)r, {y});
return (({x} != {x}) | ({y} != {y})) ? {x} + {y} : f;"""


def _asin_acos_body(e: Emitter, name: str, x: str) -> str:
    half, quarter, scale = _angles(name)
    unit = _asin_unit(e)
    head = f"""double a = fabs((double){x});
int big = a > 0.5;
double u = big ? (1.0 - a) * 0.5 : a * a;  /* exact */
double r = {unit}(big ? sqrt(u) : a, u) * {scale};
"""
    if name.startswith("asin"):
        return head + f"""r = big ? {quarter} - 2.0 * r : r;
float f = copysignf((float)r, {x});
return a > 1.0 ? NAN : f;"""
    return head + f"""r = big ? 2.0 * r : {quarter} - copysign(r, (double){x});
r = big & ({x} < 0.0f) ? {half} - r : r;
return a > 1.0 ? NAN : (float)r;"""


def _hyperbolic_body(e: Emitter, name: str, x: str) -> str:
    if name in ("sinh", "cosh", "tanh"):
        expm1 = _expm1_double(e)
        if name == "tanh":
            return f"""double m = {expm1}(2.0 * fabs((double){x}));
return copysignf((float)(m / (m + 2.0)), {x});"""
        if name == "sinh":
            return f"""double m = {expm1}(fabs((double){x}));
return copysignf((float)(0.5 * (m + m / (m + 1.0))), {x});"""
        return f"""double m = {expm1}(fabs((double){x})) + 1.0;
return (float)(0.5 * (m + 1.0 / m));"""
    log1p = _log1p_double(e)
    if name == "asinh":
        return f"""double a = fabs((double){x});
double d = a + a * a / (sqrt(a * a + 1.0) + 1.0);  /* a * a is exact */
float f = copysignf((float){log1p}(d), {x});
return a == INFINITY ? {x} : f;"""
    if name == "acosh":
        return f"""double a = (double){x};
double d = (a - 1.0) + sqrt((a - 1.0) * (a + 1.0));
float f = (float){log1p}(d);
f = {x} < 1.0f ? NAN : f;
return ({x} == INFINITY) | ({x} != {x}) ? {x} + {x} : f;"""
    # atanh
    return f"""double a = fabs((double){x});
float f = copysignf((float)(0.5 * {log1p}(2.0 * a / (1.0 - a))), {x});
f = a == 1.0 ? copysignf(INFINITY, {x}) : f;
return a > 1.0 ? NAN : f;"""


def inverse_body(e: Emitter, name: str, x: str, y: str = "") -> str:
    """The body of the float helper of ``name`` (one of ``INVERSE``) on the parameter ``x``
    (and ``y``, the second one: ``atan2(x, y)`` here is the angle of the point (y, x))."""
    if name in ("atan", "atanpi"):
        return _atan_body(e, name, x)
    if name in ("atan2", "atan2pi"):
        return _atan2_body(e, name, x, y)
    if name in ("asin", "asinpi", "acos", "acospi"):
        return _asin_acos_body(e, name, x)
    if name in HYPERBOLIC:
        return _hyperbolic_body(e, name, x)
    if name in ("erf", "erfc"):
        return _erf_body(e, name, x)
    assert name == "cbrt", name
    cbrt = _cbrt_double(e)
    return f"""float r = copysignf((float){cbrt}(fabs((double){x})), {x});
return ({x} == 0.0f) | !isfinite({x}) ? {x} + {x} : r;  /* +-0, +-inf, NaN */"""
