"""Float sines, cosines and tangents as branch-free C that gcc vectorizes: ``sin``, ``cos``,
``tan``, ``sincos``, ``sinpi``, ``cospi``, ``tanpi`` (and the ``native_``/``half_`` forms of the
first three, which use these).

glibc's ``sinf``/``cosf`` are calls, so a work-item loop calling them stays scalar. These reduce
the argument exactly, evaluate polynomials in double and round once to float, the way
``c_builtins_explog.py`` does the exponentials:

- ``sin``, ``cos``, ``tan``: |x| = (q + f) pi/2 with q an integer and |f| <= 1/2, by
  Payne-Hanek reduction in integer arithmetic for every lane: |x| = m 2^E with m the 24-bit
  significand, and of the bits of 2/pi only a 96-bit window matters, the one from weight
  2^(1-E) down (higher bits give multiples of 4 quadrants, lower ones less than 2^-70 of a
  quadrant). The window is cut from 256 bits of 2/pi by the exponent: five candidate words
  for each of its four source words, picked by masks (a table lookup would vectorize into
  gathers, which cost as much as the rest of ``sin``), then funnel shifts. m times the window,
  modulo 2^96, is 32x32->64-bit products (which gcc vectorizes); its top two bits are q
  (rounded to nearest), the rest f, converted to double in three 32-bit pieces (no int64 ->
  double conversion, which AVX2 lacks). The nearest a float comes to a multiple of pi/2 is
  2^-29.86 quadrants (at 0x1.f37c8ap+95, found by running the reduction over every float), so
  r = f pi/2 is within about 2^-40 relative of the true reduced argument there and 2^-52
  almost everywhere. For |x| <= pi/4 a select takes r = x instead, exactly.
- ``sinpi``, ``cospi``, ``tanpi``: k = rint(2x), r = x - k/2 and q = k mod 4 are exact in double
  (|r| <= 1/4), and r pi is one double rounding.
- ``sin r`` = r + r^3 S(r^2) and ``cos r`` = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4, S and C of
  degree 5: Chebyshev fits (``mpmath.chebyfit``) of (sin(sqrt u) - sqrt u) / u^(3/2) and
  (cos(sqrt u) - 1 + u/2) / u^2 on [0, (pi/4)^2], within 2^-55 and 2^-59 relative of sin and
  cos. The quadrant picks and signs the sine or cosine; the tangent divides them in double.

The double results are about 2^-51 relative from the true values, so the float is almost
always the correctly rounded one: over all 2^32 floats every result is the reference rounded to
float (glibc's double functions; exact reduction and long double for the pi forms) except 2 of
``cos``, 0.5000000019 ulp off (OpenCL 1.2 allows 4 ulp, 5 for tan, 6 for tanpi);
``tests/test_c_builtins_trig.py`` checks every float bit pattern with
``--run-slow``, every 251st without. Special values are selects at the end: inf and NaN give
NaN, sin, tan, sinpi and tanpi keep the sign of a zero, sinpi(n) is a zero of the sign of n,
cospi(n + 1/2) is +0, so that tanpi = sinpi / cospi in double meets OpenCL's rules for tanpi
(signed zeros at integers, +-inf at halves). ``sincos`` shares one reduction; its two results
are those of ``sin`` and ``cos``.
"""

from __future__ import annotations

from ppcl.compiler.codegen.c_builtins_emit import Emitter, function
from ppcl.compiler.codegen.c_builtins_explog import define_madd, horner
from ppcl.compiler.ir.types import DOUBLE, FLOAT, INT, AddressSpace, PointerType

TRIG = ("sin", "cos", "tan", "sincos", "sinpi", "cospi", "tanpi")

# floor(2/pi * 2^256), from mpmath at 400 bits of precision
_TWO_OVER_PI_256 = 0xa2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561
# the first float exponent field reduced by the table (floats in [1/2, 1) and above)
_FIRST_EXPONENT = 126
PI = "0x1.921fb54442d18p+1"
HALF_PI = "0x1.921fb54442d18p+0"
PI_4_BELOW = "0x1.921fb4p-1f"  # the largest float below pi/4
FLOAT_MAX = "0x1.fffffep127f"

# (sin(t) - t) / t^3 as a polynomial in t^2 on |t| <= pi/4, highest degree first
_SIN_S = ("0x1.5e0b19f8b1451p-33", "-0x1.ae600b02b6262p-26", "0x1.71de37968a100p-19",
          "-0x1.a01a019e83aaep-13", "0x1.1111111110bb2p-7", "-0x1.5555555555555p-3")
# (cos(t) - 1 + t^2/2) / t^4 as a polynomial in t^2 on |t| <= pi/4, highest degree first
_COS_C = ("-0x1.907da367a37cbp-37", "0x1.1eeb68e93b64cp-29", "-0x1.27e4fa17da09ep-22",
          "0x1.a01a019f4eb01p-16", "-0x1.6c16c16c16967p-10", "0x1.5555555555555p-5")


def two_over_pi_window(exponent_field: int) -> int:
    """The 96 bits of 2/pi that reduce floats of the biased exponent ``exponent_field``: those
    of weight 2^(1-E) down to 2^(-94-E), E = exponent_field - 150 (x = m 2^E, m < 2^24), as an
    integer (the fraction of m * window / 2^94 modulo 4 is that of x 2/pi modulo 4)."""
    return (_TWO_OVER_PI_256 >> (312 - exponent_field)) & ((1 << 96) - 1)


def _word_of_two_over_pi(offset: int) -> str:
    """C selecting the 32-bit word ``j + offset`` of ``_TWO_OVER_PI_256`` (bits 32 (j + offset)
    up) for ``j`` in 1..5, by masks: gcc vectorizes a table lookup with gathers, which took half
    the time of ``sin``, and turns a chain of ``?:`` into a table."""
    terms = [f"(0x{(_TWO_OVER_PI_256 >> (32 * (j + offset))) & 0xffffffff:08x}u & is{j})"
             for j in range(1, 6)]
    return "(" + " | ".join(terms) + ")"


def _uint_to_double(u: str) -> str:
    """C converting the unsigned int ``u`` to double through the bits of 2^52 + u (gcc turns
    a plain conversion into one from int64, which AVX2 cannot vectorize)."""
    return f"(__ppcl_bits_double(0x4330000000000000ul | (unsigned long)({u})) - 0x1p52)"


def _reduce(e: Emitter) -> str:
    """``double __ppcl_h_reduce_half_pi(float ax, int *q)``: r with |ax| = q pi/2 + r (mod
    2 pi), |r| <= pi/4, q in 0..3, for finite non-negative ax (others give garbage)."""
    name = "__ppcl_h_reduce_half_pi"

    def make() -> str:
        return function("double", name, (FLOAT, PointerType(INT, AddressSpace.PRIVATE)),
                        ("ax", "q"), f"""
unsigned int bits = __ppcl_float_bits(ax);
int field = (int)(bits >> 23);
/* the window: bits sh .. sh + 95 of floor(2/pi 2^256), sh = 312 - field (57..186), from
   words j .. j + 3 (j = sh / 32, 1..5) shifted right by sh % 32 */
unsigned int sh = 312u - (unsigned int)(field < {_FIRST_EXPONENT} ? {_FIRST_EXPONENT} : field);
unsigned int j = sh >> 5, at = sh & 31u;
unsigned int is1 = 0u - (unsigned int)(j == 1), is2 = 0u - (unsigned int)(j == 2);
unsigned int is3 = 0u - (unsigned int)(j == 3), is4 = 0u - (unsigned int)(j == 4);
unsigned int is5 = 0u - (unsigned int)(j == 5);
unsigned int a0 = {_word_of_two_over_pi(0)};
unsigned int a1 = {_word_of_two_over_pi(1)};
unsigned int a2 = {_word_of_two_over_pi(2)};
unsigned int a3 = {_word_of_two_over_pi(3)};
/* (high << 1) << (31 - at): no shift by 32 where at is 0 */
unsigned long w2 = (a0 >> at) | ((a1 << 1) << (31u - at));
unsigned long w1 = (a1 >> at) | ((a2 << 1) << (31u - at));
unsigned int w0 = (a2 >> at) | ((a3 << 1) << (31u - at));
unsigned int m32 = (bits & 0x7fffffu) | 0x800000u;
unsigned long m = m32;
unsigned long p1 = m * w1, p2 = m * w2;
/* m * window modulo 2^96 = (h << 32) + low word of p2 (of m w0 only the low word counts);
   x 2/pi = that / 2^94 (mod 4) */
unsigned long h = ((unsigned long)(m32 * w0) << 32) + p1 + (p2 >> 32);
unsigned long s = h << 2;  /* the fraction in quadrants, signed, times 2^64 */
double f = (double)(int)(unsigned int)(s >> 32) * 0x1p-32
    + {_uint_to_double("(unsigned int)s")} * 0x1p-64
    + {_uint_to_double("(unsigned int)p2")} * 0x1p-94;
int small = ax <= {PI_4_BELOW};
*q = small ? 0 : (int)((h + (1ul << 61)) >> 62);
return small ? (double)ax : f * {HALF_PI};
""")

    return e.define(name, make)


def _sin_pair(e: Emitter) -> str:
    """``double __ppcl_h_sin_pair(double r, double *c)``: sin r, with ``*c = cos r``, for
    |r| <= pi/4 (the definitions of ``sin`` name no ``cos``)."""
    name = "__ppcl_h_sin_pair"
    madd = define_madd(e)

    def make() -> str:
        sin_p = horner(madd, _SIN_S, "t", "ps")
        cos_p = horner(madd, _COS_C, "t", "pc")
        return function("double", name, (DOUBLE, PointerType(DOUBLE, AddressSpace.PRIVATE)),
                        ("r", "c"), f"""
double t = r * r;
{sin_p}
{cos_p}
*c = {madd}(t * t, pc, {madd}(t, -0.5, 1.0));
return {madd}(r * t, ps, r);
""")

    return e.define(name, make)


def _quadrant(e: Emitter) -> str:
    """``double __ppcl_h_trig_quadrant(double r, int q, double *c)``: sin(q pi/2 + r), with
    ``*c = cos(q pi/2 + r)``."""
    name = "__ppcl_h_trig_quadrant"
    sin_pair = _sin_pair(e)

    def make() -> str:
        return function("double", name, (DOUBLE, INT, PointerType(DOUBLE, AddressSpace.PRIVATE)),
                        ("r", "q", "c"), f"""
double cr;
double sr = {sin_pair}(r, &cr);
int odd = q & 1;
double s = odd ? cr : sr;
double k = odd ? sr : cr;
*c = ((q + 1) & 2) ? -k : k;
return (q & 2) ? -s : s;
""")

    return e.define(name, make)


def trig_body(e: Emitter, name: str, x: str, y: str) -> str:
    """The body of the float helper of ``name`` (one of ``TRIG``) on the parameter ``x``
    (``y``: the cosine's out parameter of ``sincos``)."""
    quadrant = _quadrant(e)
    if name in ("sinpi", "cospi", "tanpi"):
        # exact: k = rint(2x), r = x - k/2 (|r| <= 1/4), q = k mod 4; NaN and inf give r NaN
        head = f"""double xd = (double){x};
double k = rint(xd + xd);
double r = xd - 0.5 * k;
double qd = k - 4.0 * floor(k * 0.25);
double c;
double s = {quadrant}(r * {PI}, (int)(qd == qd ? qd : 0.0), &c);
"""
        fix_s = "s = s == 0.0 ? copysign(0.0, xd) : s;  /* sinpi(n): a zero of the sign of n */\n"
        fix_c = "c = c == 0.0 ? 0.0 : c;  /* cospi(n + 1/2): +0 */\n"
        if name == "sinpi":
            return head + fix_s + "return (float)s;"
        if name == "cospi":
            return head + fix_c + "(void)s;\nreturn (float)c;"
        return head + fix_s + fix_c + "return (float)(s / c);"
    reduce = _reduce(e)
    head = f"""float ax = fabsf({x});
int q;
double r = {reduce}(ax, &q);
double c;
double s = {quadrant}(r, q, &c);
int finite = ax <= {FLOAT_MAX};
"""
    # odd functions: computed at |x|, the sign put back by bits
    sign = f"__ppcl_float_bits({x}) & 0x80000000u"
    if name == "cos":
        return head + f"(void)s;\nreturn finite ? (float)c : {x} - {x};"
    if name == "sincos":
        return head + (f"*{y} = finite ? (float)c : {x} - {x};\n"
                       f"float v = __ppcl_bits_float(__ppcl_float_bits((float)s) ^ ({sign}));\n"
                       f"return finite ? v : {x} - {x};")
    value = "s" if name == "sin" else "s / c"
    return head + (f"float v = __ppcl_bits_float(__ppcl_float_bits((float)({value})) ^ ({sign}));\n"
                   f"return finite ? v : {x} - {x};")
