"""Float exponentials and logarithms as branch-free C that gcc vectorizes: ``exp``, ``exp2``,
``exp10``, ``expm1``, ``log``, ``log2``, ``log10``, ``log1p`` (and the ``native_``/``half_``
forms of the first six), and ``pow`` from their parts (``pow_body``).

glibc's ``expf``/``logf`` are accurate but opaque calls, so a work-item loop or a ``float8``
lane loop that calls them stays scalar; its vector versions (libmvec) are up to 3.8 ulp off for
``log``. These compute in double and round once to float:

- exponentials: ``z = x * log2(base)`` in double (relative error 2^-53, so at most 2^-45.8 in
  ``z`` over the range that does not saturate), clamped to [-160, 130] where float results are
  0 or inf anyway; ``k = rint(z)``, ``r = z - k`` exactly (|r| <= 1/2); ``2^r - 1 = r * P(r)``
  with P of degree 9 (relative error 2^-49); ``2^k`` built from exponent bits as a double, so
  ``2^k * (1 + r P(r))`` is a double of relative error about 2^-46, and the one rounding to
  float gives float denormals by gradual underflow and inf on overflow. ``expm1`` is
  ``2^k r P(r) + (2^k - 1)``, accurate near 0 without cancellation.
- logarithms: ``x = 2^e m`` with m in [sqrt(1/2), sqrt(2)) from the float's bits (denormals
  scaled by 2^23 first); ``s = (m - 1) / (m + 1)`` exactly rounded in double, |s| <= 0.1716;
  ``log m = 2 atanh(s) = s * Q(s^2)`` with Q of degree 6 (relative error 2^-52); the result
  ``e ln 2 + log m`` (scaled for log2, log10) in double. ``log1p`` takes e from ``1 + x`` and
  forms ``s = (x - (2^e - 1)) / (x + (2^e + 1))``, exact in the numerator.

The double results are within about 2^-45 relative of the true value, so after the rounding the
float is correctly rounded for all but a handful of inputs (11 of 2^32 over the eight functions)
and never more than 0.500000006 ulp off; OpenCL 1.2 allows 3 ulp. ``tests/test_c_builtins.py``
checks every float bit pattern with ``--run-slow``, every 251st without. Special values
(NaN, +-inf, +-0, negative arguments of the logarithms) are fixed by selects at the end, which gcc
turns into blends. P and Q are Chebyshev fits (``mpmath.chebyfit``) of ``(2^r - 1) / r`` on
[-1/2, 1/2] and ``2 atanh(sqrt t) / sqrt t`` on [0, 0.1716^2].

Multiply-adds of the polynomials are fused where the target has FMA (``-march=native``): that
changes no result beyond the polynomials' own error and halves their instruction count.
"""

from __future__ import annotations

from ppcl.compiler.codegen.c_builtins_emit import Emitter, function
from ppcl.compiler.ir.types import DOUBLE, FLOAT, AddressSpace, PointerType

EXPS = ("exp", "exp2", "exp10", "expm1")
LOGS = ("log", "log2", "log10", "log1p")
EXP_LOG = EXPS + LOGS

# log2 of the base of each exponential, as a double
_LOG2_BASE = {"exp": "0x1.71547652b82fep+0", "exp2": "", "exp10": "0x1.a934f0979a371p+1",
              "expm1": "0x1.71547652b82fep+0"}
# (2^r - 1) / r on [-1/2, 1/2], highest degree first
_EXP2_P = ("0x1.e5e9f548e5725p-28", "0x1.b6571de2f2351p-24", "0x1.62bfe46117445p-20",
           "0x1.ffcb76789860fp-17", "0x1.4309130378460p-13", "0x1.5d87fe908f88ap-10",
           "0x1.3b2ab6fba385fp-7", "0x1.c6b08d7044119p-5", "0x1.ebfbdff82c590p-3",
           "0x1.62e42fefa39f7p-1")
# 2 atanh(s) / s as a polynomial in s^2 for |s| <= 0.1716, highest degree first
_LOG_Q = ("0x1.58d770fefc0adp-3", "0x1.7322ff4ce4c9bp-3", "0x1.c722cdefe2e56p-3",
          "0x1.249240b6add32p-2", "0x1.999999a437ca9p-2", "0x1.5555555552d43p-1",
          "0x1.0000000000001p+1")
LN2 = "0x1.62e42fefa39efp-1"
LOG2_E = "0x1.71547652b82fep+0"
LOG10_2 = "0x1.34413509f79ffp-2"
LOG10_E = "0x1.bcb7b1526e50ep-2"
SQRT_HALF_BITS = "0x3f3504f3"  # the float just below sqrt(1/2)


def define_madd(e: Emitter) -> str:
    """The name of the double multiply-add helper (fused where the target has FMA), defined
    once in the unit."""
    def make() -> str:
        return function("double", "__ppcl_h_madd", (DOUBLE, DOUBLE, DOUBLE), ("a", "b", "c"), """
#ifdef __FMA__
return fma(a, b, c);
#else
return a * b + c;
#endif
""")

    return e.define("__ppcl_h_madd", make)


def horner(madd: str, coefficients: tuple[str, ...], var: str, out: str = "p") -> str:
    """Statements declaring the double ``out`` as the polynomial of ``coefficients`` (highest
    degree first) at ``var``, by Horner's rule with the multiply-add helper ``madd``."""
    lines = [f"double {out} = {coefficients[0]};"]
    lines += [f"{out} = {madd}({out}, {var}, {c});" for c in coefficients[1:]]
    return "\n".join(lines)


def exp2m1_parts(e: Emitter) -> str:
    """``double __ppcl_h_exp2m1_parts(double z, double *scale)``: 2^r - 1 for the reduced
    argument r of z, with ``*scale = 2^k``, so that 2^z = scale + scale * result."""
    name = "__ppcl_h_exp2m1_parts"
    madd = define_madd(e)

    def make() -> str:
        # NaN passes the clamps (both comparisons false) and gives k = 0, r = NaN
        return function("double", name, (DOUBLE, PointerType(DOUBLE, AddressSpace.PRIVATE)),
                        ("z", "scale"), f"""
z = z > 130.0 ? 130.0 : z;
z = z < -160.0 ? -160.0 : z;
double kd = rint(z);
double r = z - kd;
int k = (int)(kd == kd ? kd : 0.0);
*scale = __ppcl_bits_double((unsigned long)(long)(k + 1023) << 52);
{horner(madd, _EXP2_P, "r")}
return p * r;
""")

    return e.define(name, make)


def odd_series(e: Emitter, name: str, coefficients: tuple[str, ...]) -> str:
    """``double name(double s)``: the odd polynomial ``s * P(s * s)`` with ``P``'s
    ``coefficients`` (highest first, as ``horner`` takes them), in fused steps."""
    madd = define_madd(e)

    def make() -> str:
        return function("double", name, (DOUBLE,), ("s",), f"""
double t = s * s;
{horner(madd, coefficients, "t")}
return p * s;
""")

    return e.define(name, make)


def log_series(e: Emitter) -> str:
    """``double __ppcl_h_log_series(double s)``: log((1 + s) / (1 - s)) for |s| <= 0.1716."""
    return odd_series(e, "__ppcl_h_log_series", _LOG_Q)


def _logf_parts(e: Emitter) -> str:
    """``double __ppcl_h_logf_parts(float x, double *e)``: log(m) where x = 2^e m, m in
    [sqrt(1/2), sqrt(2)), for positive finite x (other x give garbage, replaced by the
    caller's selects)."""
    name = "__ppcl_h_logf_parts"
    series = log_series(e)

    def make() -> str:
        return function("double", name, (FLOAT, PointerType(DOUBLE, AddressSpace.PRIVATE)),
                        ("x", "e"), f"""
int sub = x < 0x1p-126f;  /* denormal or zero: scale into the normal range */
float xs = sub ? x * 0x1p23f : x;
int ix = (int)__ppcl_float_bits(xs);
int k = (ix - {SQRT_HALF_BITS}) >> 23;
double m = (double)__ppcl_bits_float((unsigned int)(ix - (k << 23)));
*e = (double)(k - (sub ? 23 : 0));
return {series}((m - 1.0) / (m + 1.0));
""")

    return e.define(name, make)


def _log_specials(e: Emitter) -> str:
    """``float __ppcl_h_logf_specials(float x, float r)``: r, or the value C99 F.9.3.7 gives
    log at x (NaN below 0, -inf at +-0, x itself at +inf and NaN)."""
    name = "__ppcl_h_logf_specials"

    def make() -> str:
        return function("float", name, (FLOAT, FLOAT), ("x", "r"), """
r = x < 0.0f ? NAN : r;
r = x == 0.0f ? -INFINITY : r;
return (x != x || x == INFINITY) ? x + x : r;
""")

    return e.define(name, make)


def explog_body(e: Emitter, name: str, x: str) -> str:
    """The body of the float helper of ``name`` (one of ``EXP_LOG``) on the parameter ``x``."""
    madd = define_madd(e)
    if name in EXPS:
        parts = exp2m1_parts(e)
        z = f"(double){x}" + (f" * {_LOG2_BASE[name]}" if _LOG2_BASE[name] else "")
        head = f"double scale;\ndouble q = {parts}({z}, &scale);\n"
        if name == "expm1":
            # the select keeps small arguments exact where -cl-unsafe-math-optimizations lets
            # gcc reassociate the sum into (scale * q + scale) - 1; expm1(-0) is -0, where the
            # sum gives +0
            return head + (f"float r = (float)(scale == 1.0 ? q : {madd}(scale, q, scale - 1.0));\n"
                           f"return {x} == 0.0f ? {x} : r;")
        return head + f"return (float){madd}(scale, q, scale);"
    if name == "log1p":
        series = log_series(e)
        # e from the float 1 + x (any e with (1 + x) / 2^e near [sqrt(1/2), sqrt(2)) serves);
        # 2^e as a double is twice the float 2^(e-1), e in [-24, 128] for x > -1; the select
        # keeps x exact for e = 0 also where gcc may reassociate (x - (2^e - 1) -> (x + 1) - 2^e
        # under -cl-unsafe-math-optimizations)
        return f"""float u = 1.0f + {x};
int iu = (int)__ppcl_float_bits(u);
int k = (iu - {SQRT_HALF_BITS}) >> 23;
double p2k = 2.0 * (double)__ppcl_bits_float((unsigned int)((k + 126) << 23));
double xd = (double){x};
double s = (k == 0 ? xd : xd - (p2k - 1.0)) / (xd + (p2k + 1.0));  /* x exactly near 0 */
float r = (float){madd}((double)k, {LN2}, {series}(s));
r = {x} < -1.0f ? NAN : r;
r = {x} == -1.0f ? -INFINITY : r;
r = ({x} != {x} || {x} == INFINITY) ? {x} + {x} : r;
return {x} == 0.0f ? {x} : r;  /* log1p(-0) is -0 */"""
    parts, specials = _logf_parts(e), _log_specials(e)
    combine = {
        "log": f"{madd}(k, {LN2}, l)",
        "log2": f"{madd}(l, {LOG2_E}, k)",
        "log10": f"{madd}(k, {LOG10_2}, l * {LOG10_E})",
    }[name]
    return f"""double k;
double l = {parts}({x}, &k);
return {specials}({x}, (float){combine});"""


def pow_body(e: Emitter, x: str, y: str) -> str:
    """The body of the float ``pow`` helper: ``2^(y log2|x|)`` in double from the two parts
    above, then C99 F.9.4.4's special cases as selects, so that a loop calling it vectorizes
    (glibc's ``powf`` is a call).

    ``log2|x|`` is ``k + log(m) log2(e)`` (relative error about 2^-52) and ``z = y log2|x|``
    one more double rounding, so over the range where the float result is finite and not zero
    (|z| < 150) z is within 2^-43 of the true value, and ``2^z`` within about 2^-45 relative
    before the one rounding to float (OpenCL 1.2 allows 16 ulp). ``log2|x|`` is -inf at 0 and
    +inf at inf, where the exponential's clamps make the zeros and infinities C99 gives
    (``pow(0, y<0) = inf``, ``pow(inf, y<0) = 0``, ``pow(x, +-inf)`` by whether |x| < 1); what
    that product cannot say is fixed after it: the sign for a negative x and an odd integer
    y, NaN for a finite negative x and a non-integer y, NaN operands, and the 1s of
    ``pow(x, 0)``, ``pow(1, y)`` and ``pow(-1, +-inf)``."""
    madd = define_madd(e)
    parts, exp2m1 = _logf_parts(e), exp2m1_parts(e)
    return f"""float ax = fabsf({x});
double k;
double l = {parts}(ax, &k);
double lg = {madd}(l, {LOG2_E}, k);
lg = ax == 0.0f ? -INFINITY : lg;
lg = ax == INFINITY ? INFINITY : lg;
double scale;
double q = {exp2m1}((double){y} * lg, &scale);
float r = (float){madd}(scale, q, scale);
/* no && or ||, and the sign flipped by bits: gcc left loops calling pow twice unvectorized
   over an int select ("relevant stmt not supported") */
int whole = rintf({y}) == {y};  /* also +-inf */
float ay = fabsf({y}) < 0x1p24f ? fabsf({y}) : 0x1p24f;  /* from 2^24 on, floats are even */
int odd = whole & ((int)ay & 1);
unsigned int flip = __ppcl_float_bits({x}) & 0x80000000u & (0u - (unsigned int)odd);
r = __ppcl_bits_float(__ppcl_float_bits(r) ^ flip);
r = (({x} < 0.0f) & ({x} != -INFINITY) & !whole) ? NAN : r;
r = (({x} != {x}) | ({y} != {y})) ? {x} + {y} : r;
r = ((ax == 1.0f) & (fabsf({y}) == INFINITY)) ? 1.0f : r;
return (({x} == 1.0f) | ({y} == 0.0f)) ? 1.0f : r;"""
