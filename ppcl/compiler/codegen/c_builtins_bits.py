"""Exact math builtins as branch-free C from the bits of a float or double, so that loops
calling them vectorize: ``ilogb``, ``logb``, ``ldexp``, ``frexp``, ``modf``, ``fract``,
``fdim``, ``nextafter``, ``sign`` for float and double, and ``fmod``, ``remainder``,
``remquo`` for float.

The C library computes these exactly too, but as calls (or, in ppcl's own ``fract`` and
``ilogb``, with early returns), which keep gcc from vectorizing a work-item loop around them.
Here every lane does the same work and special values (zeros, infinities, NaNs) are chosen by
selects at the end, which gcc turns into blends. The results are those of glibc's functions bit
for bit, NaN payloads included (``tests/test_c_builtins_bits.py`` checks every float, random
doubles and every pair of special values):

- exponent and significand from the bits: a subnormal's significand field ``m`` is read as the
  number ``m`` exactly by ``bits(m | bits(2^p)) - 2^p`` (p = 23 or 52, m < 2^p), a normal
  number whose exponent field gives ``log2 m``, with no arithmetic on subnormals;
- ``ldexp`` for float is one rounding of the exact double product ``x * 2^n`` (n clamped to
  [-300, 300], beyond which every float result is 0 or inf); for double the result's exponent
  field is written directly, and a subnormal result is the normal number ``2^1022`` times too
  large multiplied once by ``2^-1022``, the one rounding glibc's ``scalbn`` makes too;
- ``fmod`` (and ``remainder``, ``remquo`` from it) for float works in double on ``|x|``,
  ``|y|`` in a fixed number of steps, each removing up to C bits of the quotient
  (``_fmod_steps``): step k divides by ``y 2^s`` with ``s = max(0, e(x) - e(y) - C (k + 1))``,
  a schedule fixed from the start (steps that read the exponent of the last remainder took
  twice as long); the remainder so far is below ``2^(C+1) y 2^s``, so the quotient t of it
  by ``y 2^s`` is below ``2^(C+1)``, its estimate ``q = trunc(|x| * (1/|y|)(1 - 2^-50) 2^-s)``
  is the integer part of t or one less (the factor and three roundings keep the product
  between ``t (1 - 11 2^-53)`` and ``t (1 - 5 2^-53)``), ``|x| - q y 2^s`` in [0, 2 y 2^s) is
  exactly representable (25 bits at the granularity of ``y 2^s``, which divides ``|x|``) and
  computed exactly by a fused multiply-add (C = 48) or, without FMA, by an exact product
  (C = 28, q < 2^29), and one subtraction of ``y 2^s`` where needed brings it into
  [0, y 2^s) exactly. Exponents of floats differ by at most 276 <= 6 * 48 (10 * 28 without
  FMA), so the last step has s = 0 and leaves the exact remainder in [0, |y|); the low bits
  of the quotient, wanted by ``remainder`` and ``remquo``, are read from the bits of
  ``q + 2^52`` in each step and shifted by its s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ppcl.compiler.codegen.c_builtins_emit import Emitter, function
from ppcl.compiler.ir.types import DOUBLE, INT, AddressSpace, PointerType, ScalarType

# lowered here for float and double
BITS_FUNCTIONS = frozenset({"ilogb", "logb", "ldexp", "frexp", "modf", "fract", "fdim",
                            "nextafter"})
# lowered here for float only (double keeps the C library: there is no wider type to work in)
FLOAT_REMAINDERS = frozenset({"fmod", "remainder", "remquo"})


@dataclass(frozen=True)
class _Format:
    """The C spellings of one IEEE binary format."""

    F: str  # the floating type
    U: str  # the unsigned integer of its bits
    S: str  # the signed integer of the same width
    to_bits: str
    from_bits: str
    mant: int  # significand field width
    bias: int
    suffix: str  # of literals and C library names

    def lit(self, value: str) -> str:
        return value + self.suffix

    def u(self, value: int) -> str:
        return f"0x{value:x}u" + ("l" if self.U == "unsigned long" else "")

    @property
    def width(self) -> int:
        return 1 + (2 * self.bias + 1).bit_length() + self.mant

    @property
    def sign(self) -> str:
        return self.u(1 << (self.width - 1))

    @property
    def abs_mask(self) -> str:
        return self.u((1 << (self.width - 1)) - 1)

    @property
    def exp_mask(self) -> str:
        return self.u(((self.bias << 1) + 1) << self.mant)

    @property
    def mant_mask(self) -> str:
        return self.u((1 << self.mant) - 1)

    @property
    def min_normal(self) -> str:
        return self.u(1 << self.mant)

    @property
    def subnormal_shift(self) -> int:
        """A subnormal is its significand field times 2^-subnormal_shift."""
        return self.bias + self.mant - 1


_FLOAT = _Format("float", "unsigned int", "int", "__ppcl_float_bits", "__ppcl_bits_float",
                 23, 127, "f")
_DOUBLE = _Format("double", "unsigned long", "long", "__ppcl_double_bits",
                  "__ppcl_bits_double", 52, 1023, "")


def _format(elem: ScalarType) -> _Format:
    return _FLOAT if elem.name == "float" else _DOUBLE


def lowers(name: str, elem: ScalarType) -> bool:
    """Whether ``name`` on ``elem`` arguments is lowered here."""
    if elem.name not in ("float", "double"):
        return False
    return name in BITS_FUNCTIONS or (name in FLOAT_REMAINDERS and elem.name == "float")


def _exponent(f: _Format, x: str) -> str:
    """Statements setting ``U ax`` (|x|'s bits), ``U na`` (the bits of a normal number with
    |x|'s significand: |x| itself, or a subnormal's significand field as a number) and
    ``I e`` (the unbiased exponent of x, floor(log2 |x|), for finite nonzero x)."""
    two_p = f.u((f.bias + f.mant) << f.mant)
    return f"""{f.U} ax = {f.to_bits}({x}) & {f.abs_mask};
/* a subnormal's significand field m as the number m, exactly: no arithmetic on subnormals */
{f.F} m = {f.from_bits}((ax & {f.mant_mask}) | {two_p}) - {f.lit(f"0x1p{f.mant}")};
{f.S} sub = ax < {f.min_normal};
{f.U} na = sub ? {f.to_bits}(m) : ax;
{f.S} e = ({f.S})(na >> {f.mant}) - {f.bias} - (sub ? {f.subnormal_shift} : 0);"""


def _ilogb(f: _Format, x: str) -> str:
    # FP_ILOGB0 is INT_MIN, FP_ILOGBNAN INT_MAX (the value ppcl defines, also for infinities)
    return f"""{_exponent(f, x)}
int r = (int)e;
r = ax == 0 ? INT_MIN : r;
return ax >= {f.exp_mask} ? INT_MAX : r;"""


def _logb(f: _Format, x: str) -> str:
    # glibc: -1 / |x| at zeros, x * x for infinities and NaNs
    return f"""{_exponent(f, x)}
{f.F} r = ({f.F})e;
r = ax == 0 ? -INFINITY : r;
return ax >= {f.exp_mask} ? {x} * {x} : r;"""


def _frexp(f: _Format, x: str, out: str) -> str:
    half = f.u((f.bias - 1) << f.mant)
    return f"""{_exponent(f, x)}
{f.F} r = {f.from_bits}(({f.to_bits}({x}) & {f.sign}) | {half} | (na & {f.mant_mask}));
{f.S} special = (ax == 0) | (ax >= {f.exp_mask});
*{out} = special ? 0 : (int)(e + 1);
return special ? {x} + {x} : r;"""


def _ldexp(f: _Format, x: str, n: str) -> str:
    if f is _FLOAT:
        # x 2^n is exact in double for n in [-300, 300]; beyond, every float result is 0 or inf
        return f"""int k = {n} < -300 ? -300 : {n};
k = k > 300 ? 300 : k;
double p = __ppcl_bits_double((unsigned long)(long)(k + 1023) << 52);
return (float)((double){x} * p);"""
    return f"""{_exponent(f, x)}
long k = {n};
long t = e + k + 1023;  /* the result's biased exponent; no overflow: |e|, |k| < 2^32 */
long low = t < 1;  /* subnormal or zero: built 2^1022 times too large, scaled once */
t = t < -60 ? -60 : t;  /* from here on the result rounds to zero */
t = t > 2047 ? 2047 : t;
unsigned long field = (unsigned long)(low ? t + 1022 : t) << 52;
double r = __ppcl_bits_double((__ppcl_double_bits({x}) & {f.sign}) | field | (na & {f.mant_mask}));
r = r * (low ? 0x1p-1022 : 1.0);
r = t == 2047 ? __ppcl_bits_double((__ppcl_double_bits({x}) & {f.sign}) | {f.exp_mask}) : r;
return (ax == 0) | (ax >= {f.exp_mask}) ? {x} + {x} : r;"""


def _modf(f: _Format, x: str, out: str) -> str:
    # x - trunc(x) is exact; glibc gives the fraction x's sign, +-0 at infinities
    return f"""{f.F} t = trunc{f.suffix}({x});
{f.F} r = copysign{f.suffix}({x} - t, {x});
*{out} = t;
return fabs{f.suffix}({x}) == INFINITY ? copysign{f.suffix}({f.lit("0.0")}, {x}) : r;"""


def _fract(f: _Format, x: str, out: str) -> str:
    below_one = f.lit("0x1.fffffep-1" if f is _FLOAT else "0x1.fffffffffffffp-1")
    return f"""{f.F} fl = floor{f.suffix}({x});
{f.F} r = {x} - fl;
r = r < {below_one} ? r : {below_one};
r = {x} == {f.lit("0.0")} ? {x} : r;
r = fabs{f.suffix}({x}) == INFINITY ? copysign{f.suffix}({f.lit("0.0")}, {x}) : r;
r = {x} != {x} ? {x} : r;
*{out} = {x} != {x} ? {x} : fl;
return r;"""


def _fdim(f: _Format, x: str, y: str) -> str:
    return f"""{f.F} r = {x} - {y};
return {x} <= {y} ? {f.lit("0.0")} : r;"""


def _nextafter(f: _Format, x: str, y: str) -> str:
    # adding 1 to the bits moves away from zero for either sign
    return f"""{f.U} ux = {f.to_bits}({x});
{f.U} r = ({x} < {y}) == ({x} > {f.lit("0.0")}) ? ux + 1 : ux - 1;
r = (ux & {f.abs_mask}) == 0 ? ({f.to_bits}({y}) & {f.sign}) | 1 : r;
{f.F} n = {f.from_bits}(r);
n = {x} == {y} ? {y} : n;
return ({x} != {x}) | ({y} != {y}) ? {x} + {y} : n;"""


def sign_body(elem: ScalarType, x: str) -> str:
    """The body of ``sign``: 1 or -1 by the sign of x, x itself at zeros, 0 for NaN."""
    f = _format(elem)
    return f"""{f.F} r = {x} > {f.lit("0.0")} ? {f.lit("1.0")} : {x};
r = {x} < {f.lit("0.0")} ? {f.lit("-1.0")} : r;
return {x} != {x} ? {f.lit("0.0")} : r;"""


_INT_PTR = PointerType(INT, AddressSpace.PRIVATE)

# quotient bits removed per step of the float remainder and the steps that reach any remainder
# (the last step's s is 0 where the float exponents differ by their most, 127 + 149)
_STEP_BITS_FMA, _STEPS_FMA = 48, 6
_STEP_BITS, _STEPS = 28, 10
_FLOAT_EXPONENT_SPAN = 127 + 149
assert _STEP_BITS_FMA * _STEPS_FMA >= _FLOAT_EXPONENT_SPAN
assert _STEP_BITS * _STEPS >= _FLOAT_EXPONENT_SPAN


def _fmod_steps(e: Emitter) -> str:
    """``double __ppcl_h_fmodf_steps(double ax, double ay, int *quo)``: the exact remainder of
    |x| by |y| (doubles holding floats, finite, y nonzero) in [0, |y|), with ``*quo`` the low 7
    bits of the integer quotient."""
    name = "__ppcl_h_fmodf_steps"

    def steps(bits: int, count: int) -> str:
        # q is the integer quotient or one less, below 2^(bits + 1); its low bits from those of
        # q + 2^52
        product = "fma(-q, ys, ax)" if bits == _STEP_BITS_FMA else "ax - q * ys"
        return f"""#pragma GCC unroll {count}
for (int i = 0; i < {count}; ++i) {{
    long s = ed - {bits} * (i + 1);
    s = s < 0 ? 0 : s;
    double ys = ay * __ppcl_bits_double((unsigned long)(1023 + s) << 52);
    double q = trunc(ax * (inv * __ppcl_bits_double((unsigned long)(1023 - s) << 52)));
    double r = {product};  /* in [0, 2 ys) */
    q = r >= ys ? q + 1.0 : q;
    ax = r >= ys ? r - ys : r;
    unsigned int low = (unsigned int)__ppcl_double_bits(q + 0x1p52) & 127u;
    quo += s < 7 ? low << s : 0u;
}}"""

    def make() -> str:
        return function("double", name, (DOUBLE, DOUBLE, _INT_PTR), ("ax", "ay", "quo_out"), f"""
/* 1 / |y| made smaller by a factor in (1 - 11 2^-53, 1 - 5 2^-53) with the roundings of each
   estimate: never above the true quotient t < 2^49, and less than 1 below it */
double inv = (1.0 / ay) * 0x1.ffffffffffff8p-1;
long ed = (long)(__ppcl_double_bits(ax) >> 52) - (long)(__ppcl_double_bits(ay) >> 52);
unsigned int quo = 0u;
#ifdef __FMA__
{steps(_STEP_BITS_FMA, _STEPS_FMA)}
#else
{steps(_STEP_BITS, _STEPS)}
#endif
*quo_out = (int)(quo & 127u);
return ax;
""")

    return e.define(name, make)


def _float_remainder(e: Emitter, name: str, x: str, y: str, out: str) -> str:
    steps = _fmod_steps(e)
    head = f"""int quo;
double ay = fabs((double){y});
double r = {steps}(fabs((double){x}), ay, &quo);
unsigned int sx = __ppcl_float_bits({x}) & 0x80000000u;
int bad = ({x} != {x}) | ({y} != {y}) | (fabsf({x}) == INFINITY) | ({y} == 0.0f);
int keep = (fabsf({y}) == INFINITY) & !bad;  /* x itself */
"""
    if name == "fmod":
        # glibc: (x * y) / (x * y), a NaN operand's payload or the default NaN
        return head + f"""float v = __ppcl_bits_float(__ppcl_float_bits((float)r) | sx);
v = keep ? {x} : v;
float nan = ({x} != {x}) | ({y} != {y}) ? {x} + {y} : __ppcl_bits_float(0xffc00000u);
return bad ? nan : v;"""
    rounding = """double h = r + r;
/* to nearest, ties to the even quotient; a select, since the & of a double comparison and
   quo & 1 left the loop unvectorized */
int up = h == ay ? (quo & 1) : (h > ay);
r = up ? r - ay : r;
float v = __ppcl_bits_float(__ppcl_float_bits((float)r) ^ sx);"""
    if name == "remainder":
        return head + rounding + f"""
v = keep ? {x} : v;
float nan = ({x} != {x}) | ({y} != {y}) ? {x} + {y} : __ppcl_bits_float(0xffc00000u);
return bad ? nan : v;"""
    # remquo: the low 7 bits of the rounded quotient, negative where x / y is
    return head + rounding + f"""
int k = (quo + up) & 127;
k = (__ppcl_float_bits({x}) ^ __ppcl_float_bits({y})) & 0x80000000u ? -k : k;
*{out} = bad | keep ? 0 : k;
v = keep ? {x} : v;
return bad ? NAN : v;"""


def bits_body(e: Emitter, name: str, elem: ScalarType, args: Sequence[str]) -> str:
    """The body of the scalar helper of ``name`` (``lowers(name, elem)``) on ``args``."""
    f = _format(elem)
    x = args[0]
    y = args[1] if len(args) > 1 else ""
    if name == "ilogb":
        return _ilogb(f, x)
    if name == "logb":
        return _logb(f, x)
    if name == "ldexp":
        return _ldexp(f, x, y)
    if name == "frexp":
        return _frexp(f, x, y)
    if name == "modf":
        return _modf(f, x, y)
    if name == "fract":
        return _fract(f, x, y)
    if name == "fdim":
        return _fdim(f, x, y)
    if name == "nextafter":
        return _nextafter(f, x, y)
    return _float_remainder(e, name, x, y, args[2] if len(args) > 2 else "")

