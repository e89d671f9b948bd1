"""C lowering of conversions and vector data functions: ``convert_T[_sat][_rnd]``, ``as_T``,
``vloadN``/``vstoreN`` and the ``half`` loads and stores with every rounding mode.

Conversions that mean what a C cast means (integer truncation, float to integer toward zero,
integer to float to nearest) are ``__builtin_convertvector`` on vectors. The others go through
a scalar helper per component; rounding modes other than the C default are exact tricks that
need no change of the floating-point environment: round with the default mode, compare the
result with the source exactly, and step one ulp with ``nextafter`` when it went the wrong way.
"""

from __future__ import annotations

from ppcl.compiler.codegen.c_builtins_emit import (
    C_SCALAR_NAMES,
    Emitter,
    c_type,
    define_overload,
    elem_of,
    function,
    int_literal,
)
from ppcl.compiler.ir.builtins import Overload
from ppcl.compiler.ir.types import HALF, PointerType, ScalarType, VectorType, int_limits

# ---------------------------------------------------------------- convert_*

_MANTISSA_BITS = {"float": 24, "double": 53}


def parse_convert_name(name: str) -> tuple[bool, str]:
    """``convert_int4_sat_rtp`` -> (True, "rtp"); the mode is "" when the name has none."""
    mode = ""
    for m in ("_rte", "_rtz", "_rtp", "_rtn"):
        if name.endswith(m):
            mode = m[1:]
            name = name[: -len(m)]
    return name.endswith("_sat"), mode


def _is_c_cast(dst: ScalarType, src: ScalarType, sat: bool, mode: str) -> bool:
    """Whether the conversion is exactly what a C cast does (in the default FP environment)."""
    if dst == src:
        return True
    if dst.is_integer and src.is_integer:
        return not sat or _int_range_fits(dst, src)
    if dst.is_integer:  # from floating
        return not sat and mode in ("", "rtz")
    if src.is_integer:  # to floating
        return mode in ("", "rte") or src.bits <= _MANTISSA_BITS[dst.name]
    return dst.bits > src.bits or mode in ("", "rte")


def _int_range_fits(dst: ScalarType, src: ScalarType) -> bool:
    dlo, dhi = int_limits(dst)
    slo, shi = int_limits(src)
    return dlo <= slo and shi <= dhi


def _int_to_int_sat(dst: ScalarType, src: ScalarType) -> str:
    dlo, dhi = int_limits(dst)
    slo, shi = int_limits(src)
    D = C_SCALAR_NAMES[dst.name]
    lines = []
    if slo < dlo:
        lines.append(f"if (x < {int_literal(dlo, src)}) return {int_literal(dlo, dst)};")
    if shi > dhi:
        lines.append(f"if (x > {int_literal(dhi, src)}) return {int_literal(dhi, dst)};")
    lines.append(f"return ({D})x;")
    return "\n".join(lines)


_FLOOR_OF_MODE = {"": "trunc", "rtz": "trunc", "rte": "rint", "rtp": "ceil", "rtn": "floor"}


def _float_to_int(dst: ScalarType, src: ScalarType, sat: bool, mode: str) -> str:
    D = C_SCALAR_NAMES[dst.name]
    fn = _FLOOR_OF_MODE[mode] + ("f" if src.name == "float" else "")
    if not sat:
        return f"return ({D}){fn}(x);"
    lo, hi = int_limits(dst)
    suffix = "f" if src.name == "float" else ""
    return f"""if (isnan(x)) return 0;
{c_type(src)} r = {fn}(x);
if (r < {float(lo).hex()}{suffix}) return {int_literal(lo, dst)};
if (r >= {float(hi + 1).hex()}{suffix}) return {int_literal(hi, dst)};
return ({D})r;"""


def _int_to_float(dst: ScalarType, src: ScalarType, mode: str) -> str:
    D = c_type(dst)
    wide = "__int128" if src.bits == 64 else "long"
    step = {
        "rtz": "if (v >= 0 ? b > v : b < v) r = {na}(r, 0);",
        "rtp": "if (b < v) r = {na}(r, INFINITY);",
        "rtn": "if (b > v) r = {na}(r, -INFINITY);",
    }[mode].format(na="nextafterf" if dst.name == "float" else "nextafter")
    return f"""{D} r = ({D})x;
{wide} b = ({wide})r, v = ({wide})x;
{step}
return r;"""


def _double_to_float(mode: str) -> str:
    step = {
        "rtz": "if (fabs((double)r) > fabs(x)) r = nextafterf(r, 0.0f);",
        "rtp": "if ((double)r < x) r = nextafterf(r, INFINITY);",
        "rtn": "if ((double)r > x) r = nextafterf(r, -INFINITY);",
    }[mode]
    return f"""float r = (float)x;
if (isnan(x)) return r;
{step}
return r;"""


def _convert_body(dst: ScalarType, src: ScalarType, sat: bool, mode: str) -> str:
    if _is_c_cast(dst, src, sat, mode):
        return f"return ({c_type(dst)})x;"
    if dst.is_integer and src.is_integer:
        return _int_to_int_sat(dst, src)
    if dst.is_integer:
        return _float_to_int(dst, src, sat, mode)
    if src.is_integer:
        return _int_to_float(dst, src, mode)
    return _double_to_float(mode)


def define_convert_scalar(e: Emitter, dst: ScalarType, src: ScalarType, sat: bool,
                          mode: str) -> str:
    name = f"__ppcl_s_convert_{dst.name}_{src.name}{'_sat' if sat else ''}{'_' + mode if mode else ''}"
    return e.define(name, lambda: function(c_type(dst), name, (src,), ("x",),
                                           _convert_body(dst, src, sat, mode)))


def lower_convert(e: Emitter, ov: Overload) -> str:
    sat, mode = parse_convert_name(ov.name)
    dst, src = elem_of(ov.ret), elem_of(ov.params[0])
    if not dst.is_integer:
        sat = False
    if isinstance(ov.ret, VectorType) and _is_c_cast(dst, src, sat, mode):
        return define_overload(
            e, ov, lambda a: f"return __builtin_convertvector({a[0]}, {c_type(ov.ret)});")
    helper = define_convert_scalar(e, dst, src, sat, mode)
    if not isinstance(ov.ret, VectorType):
        return define_overload(e, ov, lambda a: f"return {helper}({a[0]});")
    lanes = ov.ret.storage_width
    return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r;
for (int i = 0; i < {lanes}; ++i) r[i] = {helper}({a[0]}[i]);
return r;""")


# ---------------------------------------------------------------- as_*


def lower_reinterpret(e: Emitter, ov: Overload) -> str:
    return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r;
memcpy(&r, &{a[0]}, sizeof r);
return r;""")


# ---------------------------------------------------------------- half <-> float bits

_FORMATS = {  # source: (C bits type, total bits, mantissa bits, exponent bias, bits function)
    "float": ("unsigned int", 32, 23, 127, "__ppcl_float_bits"),
    "double": ("unsigned long", 64, 52, 1023, "__ppcl_double_bits"),
}

_OVERFLOW = {"rte": "0x7c00", "rtz": "0x7bff", "rtp": "(sign ? 0x7bff : 0x7c00)",
             "rtn": "(sign ? 0x7c00 : 0x7bff)"}
# what is added to the significand before the shift that rounds it by each mode (``shift``
# bits shifted out): no comparison or bool, which gcc's vectorizer does not take in this
# arithmetic. Round to nearest even adds half less one, and one more where the kept bits are
# odd, so it carries when the bits shifted out exceed half, or equal it with the kept bits odd.
_ROUND_ADD = {
    "rte": "((({U})1 << (shift - 1)) - 1) + ((sig >> shift) & 1)",
    "rtz": "0",
    "rtp": "(sign ? 0 : (({U})1 << shift) - 1)",
    "rtn": "(sign ? (({U})1 << shift) - 1 : 0)",
}


def define_to_half(e: Emitter, src: ScalarType, mode: str) -> str:
    """The half bit pattern of a float or double, rounded by ``mode``: the significand with its
    implicit bit is shifted to the half's precision (more for half denormals), and the bits
    shifted out decide the rounding; a carry moves into the exponent by itself. Written
    without branches (zeros, overflow, infinities and NaN chosen by selects at the end, every
    shift in range for any input), so that a loop converting lanes or work-items vectorizes:
    ``vstore_half4`` of floats ran 24 times slower than pocl with the early returns."""
    mode = mode or "rte"
    name = f"__ppcl_h_{src.name}_to_half_{mode}"
    U, total, m, bias, bits = _FORMATS[src.name]

    def make() -> str:
        return function("unsigned short", name, (src,), ("x",), f"""
{U} u = {bits}(x);
unsigned short sign = (unsigned short)((u >> {total - 16}) & 0x8000u);
{U} a = u & ((({U})1 << {total - 1}) - 1);
{U} inf = ({U}){(1 << (total - 1 - m)) - 1} << {m};
int e = (int)(a >> {m}) - {bias};
{U} sig = (a & ((({U})1 << {m}) - 1)) | ((a >> {m}) != 0 ? (({U})1 << {m}) : 0);
int shift = {m - 10} + (e < -14 ? -14 - e : 0);
shift = shift > {m + 2} ? {m + 2} : shift;
unsigned short base = e >= -14 ? (unsigned short)(((unsigned)(e + 14) & 31u) << 10) : 0;
{U} rounded = (sig + ({_ROUND_ADD[mode].format(U=U)})) >> shift;
unsigned short r = (unsigned short)(sign | (unsigned short)(base + rounded));
r = e > 15 ? (unsigned short)(sign | {_OVERFLOW[mode]}) : r;
r = a == 0 ? sign : r;
unsigned short nan = (unsigned short)(sign | 0x7e00 | (unsigned short)((a >> {m - 10}) & 0x3ff));
r = a > inf ? nan : r;
return a == inf ? (unsigned short)(sign | 0x7c00) : r;
""")

    return e.define(name, make)


def define_from_half(e: Emitter) -> str:
    """The float value of a half bit pattern (exact: every half is a float). The magnitude's
    bits moved to a float's places read as the half's value times 2^-112 (the exponent fields
    differ by 112; a half denormal becomes a float denormal), so one exact multiplication
    scales it back; infinities and NaN take the float's all-ones exponent by a select. No
    branch, so loops loading halves vectorize."""
    name = "__ppcl_h_half_to_float"
    return e.define(name, lambda: function("float", name, (HALF,), ("h",), """
unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
unsigned int magnitude = (unsigned int)(h & 0x7fffu) << 13;
float value = __ppcl_bits_float(magnitude) * 0x1p112f;
unsigned int bits = magnitude >= (0x7c00u << 13) ? magnitude | 0x7f800000u
                                                 : __ppcl_float_bits(value);
return __ppcl_bits_float(bits | sign);
"""))


# ---------------------------------------------------------------- vloadN, vstoreN and halves


def _vector_width(name: str, prefix: str) -> tuple[int, str]:
    """``vstore_half4_rtz`` with prefix ``vstore_half`` -> (4, "rtz"); width 1 without digits."""
    rest = name[len(prefix):]
    digits = ""
    while rest and rest[0].isdigit():
        digits += rest[0]
        rest = rest[1:]
    return int(digits or 1), rest.lstrip("_")


def lower_vload(e: Emitter, ov: Overload) -> str:
    ptr = ov.params[1]
    assert isinstance(ptr, PointerType)
    if ov.name.startswith("vload_half") or ov.name.startswith("vloada_half"):
        aligned = ov.name.startswith("vloada")
        n, _ = _vector_width(ov.name, "vloada_half" if aligned else "vload_half")
        conv = define_from_half(e)
        if n == 1:
            return define_overload(e, ov, lambda a: f"return {conv}({a[1]}[{a[0]}]);")
        stride = 4 if aligned and n == 3 else n
        return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r = {{0}};
const unsigned short *s = {a[1]} + {a[0]} * {stride};
for (int i = 0; i < {n}; ++i) r[i] = {conv}(s[i]);
return r;""")
    n, _ = _vector_width(ov.name, "vload")
    elem = c_type(elem_of(ptr))
    return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r = {{0}};
memcpy(&r, {a[1]} + {a[0]} * {n}, {n} * sizeof({elem}));
return r;""")


def lower_vstore(e: Emitter, ov: Overload) -> str:
    data = ov.params[0]
    ptr = ov.params[2]
    assert isinstance(ptr, PointerType)
    if ov.name.startswith("vstore_half") or ov.name.startswith("vstorea_half"):
        aligned = ov.name.startswith("vstorea")
        n, mode = _vector_width(ov.name, "vstorea_half" if aligned else "vstore_half")
        conv = define_to_half(e, elem_of(data), mode)
        if n == 1:
            return define_overload(e, ov, lambda a: f"{a[2]}[{a[1]}] = {conv}({a[0]});")
        stride = 4 if aligned and n == 3 else n
        return define_overload(e, ov, lambda a: f"""unsigned short *d = {a[2]} + {a[1]} * {stride};
for (int i = 0; i < {n}; ++i) d[i] = {conv}({a[0]}[i]);""")
    n, _ = _vector_width(ov.name, "vstore")
    elem = c_type(elem_of(ptr))
    return define_overload(
        e, ov, lambda a: f"memcpy({a[2]} + {a[1]} * {n}, &{a[0]}, {n} * sizeof({elem}));")
