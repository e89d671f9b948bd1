"""C lowering of the math builtins (OpenCL C 1.2 section 6.12.2): ``sin``... and ``native_*``,
``half_*``.

The C library does the work where its accuracy is within OpenCL's ULP limits (glibc's float and
double functions are). Functions C lacks are built from it: float ones through double, where
one rounding of an accurate double result is accurate; double ones with care for the edge cases
the specification lists (``sinpi(-n) = -0``, ``powr(0, 0) = NaN``...). The float exponentials
and logarithms are the exception: they are written out in C the same way (double, one rounding;
``c_builtins_explog.py``) so that loops calling them vectorize, which calls into libm prevent;
so are float ``pow`` and ``hypot``, the float trigonometric functions (``c_builtins_trig.py``),
the inverse trigonometric and hyperbolic ones, ``erf``, ``erfc`` and ``cbrt``
(``c_builtins_inverse.py``), and the exact functions computed from the bits of a float or
double (``ilogb``, ``ldexp``, ``frexp``, ``fmod``...: ``c_builtins_bits.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ppcl.compiler.codegen.c_builtins_bits import bits_body, lowers
from ppcl.compiler.codegen.c_builtins_emit import (
    Emitter,
    ScalarImpl,
    c_type,
    define_elementwise,
    define_scalar_helper,
    float_literal,
    function,
    scalar_params,
)
from ppcl.compiler.codegen.c_builtins_explog import EXP_LOG, explog_body, pow_body
from ppcl.compiler.codegen.c_builtins_inverse import INVERSE, inverse_body
from ppcl.compiler.codegen.c_builtins_trig import TRIG, trig_body
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.ir.builtins import Overload
from ppcl.compiler.ir.types import DOUBLE, FLOAT, INT, ScalarType

# same name in C (float with an ``f`` suffix)
_LIBM1 = {
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh", "erfc",
    "erf", "exp", "exp2", "expm1", "fabs", "floor", "lgamma", "log", "log2", "log10", "log1p",
    "logb", "rint", "round", "sin", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc",
}
_LIBM2 = {"atan2", "copysign", "fdim", "fmod", "hypot", "nextafter", "pow", "remainder"}
# the argument is divided by pi after the C function
_PI_SCALED = {"acospi": "acos", "asinpi": "asin", "atanpi": "atan", "atan2pi": "atan2"}


def _libm(name: str, elem: ScalarType) -> str:
    return name + ("f" if elem.name == "float" else "")


def _pi_kernels(e: Emitter) -> tuple[str, str]:
    """Double helpers sinpi/cospi with exact argument reduction: x is reduced modulo 2 (exact),
    folded into [0, 1/2] by exact subtractions, then multiplied by pi. The reduction is
    ``x - 2 trunc(x / 2)`` with x's sign, which is ``fmod(x, 2)`` bit for bit (``x / 2`` is
    exact but for denormals, whose quotient truncates to 0 either way) without its call."""

    def sinpi() -> str:
        return function("double", "__ppcl_h_sinpi", (DOUBLE,), ("x",), """
if (isinf(x)) return x - x;
double r = copysign(x - 2.0 * trunc(0.5 * x), x);
if (r > 1.0) r -= 2.0;
if (r < -1.0) r += 2.0;
double a = fabs(r);
if (a > 0.5) a = 1.0 - a;
double s = a <= 0.25 ? sin(M_PI * a) : cos(M_PI * (0.5 - a));
return copysign(s, r);
""")

    def cospi() -> str:
        return function("double", "__ppcl_h_cospi", (DOUBLE,), ("x",), """
if (isinf(x)) return x - x;
double a = fabs(x - 2.0 * trunc(0.5 * x));
if (a > 1.0) a = 2.0 - a;
if (a == 0.5) return 0.0;
if (a <= 0.25) return cos(M_PI * a);
if (a < 0.75) return sin(M_PI * (0.5 - a));
return -cos(M_PI * (1.0 - a));
""")

    return e.define("__ppcl_h_sinpi", sinpi), e.define("__ppcl_h_cospi", cospi)


def _math_body(  # noqa: C901 - one case per builtin
    name: str, elem: ScalarType, fast: bool
) -> Callable[[Emitter, Sequence[str]], str]:
    F = c_type(elem)
    is_float = elem.name == "float"

    def lit(value: str) -> str:
        return float_literal(value, elem)

    def f(libm_name: str) -> str:
        return _libm(libm_name, elem)

    def body(e: Emitter, a: Sequence[str]) -> str:
        x = a[0]
        y = a[1] if len(a) > 1 else ""
        z = a[2] if len(a) > 2 else ""
        if name == "cbrt" and not is_float:
            # glibc's cbrt is off by up to 3 ulp (the bound is 2): one Newton step in long
            # double brings it within half an ulp and a rounding
            return f"""if ({x} == 0.0 || !isfinite({x})) return cbrt({x});
long double r = cbrt({x});
r -= (r * r * r - {x}) / (3.0L * r * r);
return (double)r;"""
        if lowers(name, elem):
            return bits_body(e, name, elem, a)
        if is_float and name in EXP_LOG:
            return explog_body(e, name, x)
        if is_float and name == "pow":
            return pow_body(e, x, y)
        if is_float and name in INVERSE:
            return inverse_body(e, name, x, y)
        if is_float and name in TRIG:
            return trig_body(e, name, x, y)
        if is_float and name == "hypot":
            # the squares are exact in double and cannot overflow there: one rounding of the
            # sum and of the square root, then one to float (glibc's hypotf call kept every
            # loop calling it scalar); C99's hypot(+-inf, nan) is inf
            return (f"double r = sqrt((double){x} * (double){x} + (double){y} * (double){y});\n"
                    f"return isinf({x}) || isinf({y}) ? INFINITY : (float)r;")
        if name in _LIBM1:
            return f"return {f(name)}({x});"
        if name in _LIBM2:
            return f"return {f(name)}({x}, {y});"
        if name in ("fmax", "fmin"):
            return f"{F} r;\n{max_min_selects(name, x, y, 'r', elem)}\nreturn r;"
        if name == "fma":
            return f"return {f('fma')}({x}, {y}, {z});"
        if name == "mad":
            return (f"#ifdef __FMA__\nreturn {f('fma')}({x}, {y}, {z});\n#else\n"
                    f"return {x} * {y} + {z};\n#endif")
        if name in _PI_SCALED:
            args = f"(double){x}" + (f", (double){y}" if y else "")
            return f"return ({F})({_PI_SCALED[name]}({args}) / M_PI);"
        if name in ("sinpi", "cospi"):
            sinpi, cospi = _pi_kernels(e)
            return f"return ({F}){sinpi if name == 'sinpi' else cospi}((double){x});"
        if name == "tanpi":
            sinpi, cospi = _pi_kernels(e)
            return f"return ({F})({sinpi}((double){x}) / {cospi}((double){x}));"
        if name == "exp10":
            return f"return ({F})pow(10.0, (double){x});"
        if name == "rsqrt":
            if is_float:  # both steps correctly rounded: under 1.5 ulp, the bound is 2
                return f"return 1.0f / sqrtf({x});"
            return f"return 1.0 / sqrt({x});"
        if name == "ldexp":
            return f"return {f('ldexp')}({x}, {y});"
        if name == "frexp":
            return f"return {f('frexp')}({x}, {y});"
        if name == "modf":
            return f"return {f('modf')}({x}, {y});"
        if name == "lgamma_r":
            return f"return {f('lgamma')}_r({x}, {y});"
        if name == "sincos":
            return f"*{y} = {f('cos')}({x});\nreturn {f('sin')}({x});"
        if name == "fract":
            return f"""if (isnan({x})) {{ *{y} = {x}; return {x}; }}
if (isinf({x})) {{ *{y} = {x}; return {f('copysign')}({lit('0.0')}, {x}); }}
{F} fl = {f('floor')}({x});
*{y} = fl;
if ({x} == {lit('0.0')}) return {x};
return {f('fmin')}({x} - fl, {lit('0x1.fffffep-1' if is_float else '0x1.fffffffffffffp-1')});"""
        if name == "ilogb":
            return f"""if (isnan({x})) return INT_MAX;
if (isinf({x})) return INT_MAX;
if ({x} == {lit('0.0')}) return INT_MIN;
return {f('ilogb')}({x});"""
        if name == "maxmag":
            return f"""{F} ax = {f('fabs')}({x}), ay = {f('fabs')}({y});
if (ax > ay) return {x};
if (ay > ax) return {y};
if (isnan({x})) return {y};
if (isnan({y})) return {x};
return signbit({x}) ? {y} : {x};  /* equal magnitudes: the larger, +0 over -0 */"""
        if name == "minmag":
            return f"""{F} ax = {f('fabs')}({x}), ay = {f('fabs')}({y});
if (ax < ay) return {x};
if (ay < ax) return {y};
if (isnan({x})) return {y};
if (isnan({y})) return {x};
return signbit({x}) ? {x} : {y};  /* equal magnitudes: the smaller, -0 under +0 */"""
        if name == "nan":
            if is_float:
                return f"return __ppcl_bits_float(0x7fc00000u | {x});"
            return f"return __ppcl_bits_double(0x7ff8000000000000ul | {x});"
        if name == "pown":
            return f"return ({F})pow((double){x}, (double){y});"
        if name in ("powr", "half_powr", "native_powr"):
            if fast and name == "native_powr":
                return f"return {f('pow')}({x}, {y});"
            return f"""if (isnan({x}) || isnan({y}) || {x} < {lit('0.0')}) return {x} + {y} + NAN;
if ({x} == {lit('0.0')}) {{
    if ({y} == {lit('0.0')}) return NAN;
    return {y} < {lit('0.0')} ? INFINITY : {lit('0.0')};
}}
if (isinf({x})) {{
    if ({y} == {lit('0.0')}) return NAN;
    return {y} < {lit('0.0')} ? {lit('0.0')} : INFINITY;
}}
if ({x} == {lit('1.0')}) return isinf({y}) ? NAN : {lit('1.0')};
return {f('pow')}({x}, {y});"""
        if name == "rootn":
            # float: pow in double is accurate enough; double: pow in long double, so the error
            # of 1/n (relative 2^-64) stays below an ulp of the result
            wide, wf = ("double", "pow") if is_float else ("long double", "powl")
            one = "1.0" if is_float else "1.0L"
            return f"""if ({y} == 0 || isnan({x})) return NAN;
int odd = {y} & 1;
if ({x} < {lit('0.0')} && !odd) return NAN;
if ({y} == 1) return {x};
if ({y} == 2) return {f('sqrt')}({f('fabs')}({x}));  /* rootn(-0, 2) is +0 */
if ({y} == 3) return {f('cbrt')}({x});
{F} m = ({F}){wf}(({wide}){f('fabs')}({x}), {one} / ({wide}){y});
return odd ? {f('copysign')}(m, {x}) : m;"""
        if name == "remquo":
            # scaled down by 2^-8 (exactly, where x / y >= 1) where 128 |y| and m - rm could
            # overflow; float remquo is c_builtins_bits.py's
            huge = lit("0x1p100" if is_float else "0x1p1000")
            return f"""{F} ax = {f('fabs')}({x}), ay = {f('fabs')}({y});
if (isnan({x}) || isnan({y}) || isinf({x}) || ay == {lit('0.0')}) {{ *{z} = 0; return NAN; }}
{F} sc = ay > {huge} ? {lit('0x1p-8')} : {lit('1.0')};
ax *= sc;
ay *= sc;
{F} m = {f('fmod')}(ax, {lit('128.0')} * ay);
{F} rm = {f('remainder')}(m, ay);
int k = (int){f('rint')}((m - rm) / ay) & 127;
*{z} = (({x} < {lit('0.0')}) != ({y} < {lit('0.0')})) ? -k : k;
return {f('remainder')}({x}, {y});"""
        return _native_body(e, name, x, y)

    return body


def max_min_selects(name: str, x: str, y: str, out: str, elem: ScalarType) -> str:
    """Statements setting ``out`` to ``fmax(x, y)`` or ``fmin(x, y)`` (``name``) by selects,
    which gcc vectorizes: a NaN operand gives the other one, and +0 is the larger zero (IEEE
    754-2019 maximumNumber; the C library's fmax may return either zero, and gcc's vector and
    scalar code chose differently). ``clamp`` is written with it too. The sign of x is read
    as a comparison of x's own width: the int of ``signbit`` left double loops unvectorized."""
    better = ">" if name == "fmax" else "<"
    negative = (f"signbit({x})" if elem.name == "float"
                else f"(long)__ppcl_double_bits({x}) < 0")
    pick = f"{negative} ? {x} : {y}" if name == "fmin" else f"{negative} ? {y} : {x}"
    return (f"{out} = {x} {better} {y} ? {x} : {y};  /* a NaN x gives y */\n"
            f"{out} = {y} != {y} ? {x} : {out};\n"
            f"{out} = {x} == {y} ? ({pick}) : {out};")


def _native_body(e: Emitter, name: str, x: str, y: str) -> str:
    """``native_*`` and ``half_*`` (float only): the precise functions, with simpler formulas for
    reciprocals. The exponentials and logarithms are the vectorizable precise ones, also under
    fast math: they are faster than any libm call."""
    base = name.split("_", 1)[1]
    if base in EXP_LOG:
        return explog_body(e, base, x)
    if base in TRIG:
        return trig_body(e, base, x, y)
    if base == "divide":
        return f"return {x} / {y};"
    if base == "recip":
        return f"return 1.0f / {x};"
    if base == "rsqrt":
        return f"return 1.0f / sqrtf({x});"
    if base in _LIBM1:
        return f"return {base}f({x});"
    raise CodegenError(f"no C lowering of builtin '{name}'")


def math_impl(name: str, ov: Overload, fast_math: bool) -> ScalarImpl:
    params = scalar_params(ov)
    elem = params[0]
    assert isinstance(elem, ScalarType)
    if name == "ilogb":
        ret = INT
    elif name == "nan":
        ret = FLOAT if elem.bits == 32 else DOUBLE
    else:
        ret = elem
    body_elem = ret if name == "nan" else elem  # nan(uint) computes a float
    return ScalarImpl(ret, params, _math_body(name, body_elem, fast_math))


def lower_math(e: Emitter, ov: Overload) -> str:
    """Define the math or native overload ``ov``; return its C name."""
    impl = math_impl(ov.name, ov, e.fast_math)
    helper = define_scalar_helper(e, ov.name, impl)
    return define_elementwise(e, ov, helper)
