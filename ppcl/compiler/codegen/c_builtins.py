"""The CPU backend's lowering of OpenCL C builtins to C.

The typing table (``ir.builtins``) says which overload a call resolves to; this module says what
that overload is in C. A call site names ``c_builtin_name(ov)``; the translation unit of a
kernel carries ``c_builtin_definitions`` of exactly the overloads it calls (after
``include/ppcl_types.h``), so gcc parses and optimizes only what a kernel uses.

Work-item functions, barriers, async copies and printf depend on the work-item loops and are
lowered by the work-group compiler, not here. Families by module: math and native functions in
``c_builtins_math``, conversions, reinterpretation and vector loads/stores in
``c_builtins_convert``, images in ``c_builtins_image``; integer, common, geometric, relational, shuffle, atomic and fence
functions below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ppcl.compiler.codegen.c_builtins_bits import sign_body
from ppcl.compiler.codegen.c_builtins_convert import (
    lower_convert,
    lower_reinterpret,
    lower_vload,
    lower_vstore,
)
from ppcl.compiler.codegen.c_builtins_emit import (
    C_SCALAR_NAMES,
    Emitter,
    ScalarImpl,
    c_name,
    c_type,
    define_elementwise,
    define_overload,
    define_scalar_helper,
    elem_of,
    float_literal,
    function,
    int_literal,
    scalar_params,
)
from ppcl.compiler.codegen.c_builtins_image import lower_image
from ppcl.compiler.codegen.c_builtins_math import lower_math, max_min_selects
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.ir.builtins import Overload
from ppcl.compiler.ir.types import (
    AddressSpace,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    int_limits,
    width_of,
)

INCLUDE_DIR = Path(__file__).parent / "include"
TYPES_HEADER = INCLUDE_DIR / "ppcl_types.h"


def c_builtin_name(ov: Overload) -> str:
    """The C function a call of overload ``ov`` names."""
    return c_name(ov)


def c_builtin_definitions(overloads: Iterable[Overload], *, fast_math: bool = False) -> str:
    """C definitions of the given overloads and their helpers, each once, dependencies first.

    ``fast_math`` (``-cl-fast-relaxed-math``) lets ``native_*`` and the ``fast_*`` geometric
    functions use shorter formulas."""
    e = Emitter(fast_math=fast_math)
    for ov in overloads:
        lower_builtin(e, ov)
    return e.text()


def lower_builtin(e: Emitter, ov: Overload) -> str:
    """Define overload ``ov`` in ``e``; return its C name."""
    lower = _FAMILIES.get(ov.family)
    if lower is None:
        raise CodegenError(
            f"builtin '{ov.name}' ({ov.family}) is lowered by the work-group compiler")
    return lower(e, ov)


def _unsigned(elem: ScalarType) -> str:
    return C_SCALAR_NAMES[elem.with_signedness(False).name]


# ---------------------------------------------------------------- integer functions


def _integer_body(name: str, elem: ScalarType) -> Callable[[Emitter, Sequence[str]], str]:
    T = C_SCALAR_NAMES[elem.name]
    U = _unsigned(elem)
    bits = elem.bits
    lo, hi = int_limits(elem)
    MIN, MAX = int_literal(lo, elem), int_literal(hi, elem)
    signed = elem.is_signed
    wide = ("__int128" if signed else "unsigned __int128") if bits == 64 else (
        "long" if signed else "unsigned long")

    def body(e: Emitter, a: Sequence[str]) -> str:
        x, y, z = (list(a) + ["", ""])[:3]
        if name == "abs":
            return f"return {x} < 0 ? ({U})0 - ({U}){x} : ({U}){x};" if signed else f"return {x};"
        if name == "abs_diff":
            return f"return ({U})({x} > {y} ? ({U}){x} - ({U}){y} : ({U}){y} - ({U}){x});"
        if name == "add_sat":
            sat = f"{y} > 0 ? {MAX} : {MIN}" if signed else MAX
            return f"{T} r;\nif (__builtin_add_overflow({x}, {y}, &r)) return {sat};\nreturn r;"
        if name == "sub_sat":
            sat = f"{y} < 0 ? {MAX} : {MIN}" if signed else "0"
            return f"{T} r;\nif (__builtin_sub_overflow({x}, {y}, &r)) return {sat};\nreturn r;"
        if name == "hadd":
            return f"return ({T})(({x} >> 1) + ({y} >> 1) + ({x} & {y} & 1));"
        if name == "rhadd":
            return f"return ({T})(({x} >> 1) + ({y} >> 1) + (({x} | {y}) & 1));"
        if name == "clz":
            if bits == 64:
                return f"return {x} == 0 ? 64 : ({T})__builtin_clzl((unsigned long){x});"
            return (f"return {x} == 0 ? {bits} : "
                    f"({T})(__builtin_clz((unsigned int)({U}){x}) - {32 - bits});")
        if name == "popcount":
            if bits == 64:
                return f"return ({T})__builtin_popcountl((unsigned long){x});"
            return f"return ({T})__builtin_popcount((unsigned int)({U}){x});"
        if name in ("mul_hi", "mad_hi"):
            hi_part = f"({T})((({wide}){x} * ({wide}){y}) >> {bits})"
            if name == "mul_hi":
                return f"return {hi_part};"
            return f"return ({T})(({U}){hi_part} + ({U}){z});"
        if name == "mad_sat":
            if bits == 64:
                full = f"({wide}){x} * {y} + {z}"
            elif signed:
                full = f"(long){x} * {y} + {z}"
            else:
                full = f"(unsigned long){x} * {y} + {z}"
            rtype = wide if bits in (32, 64) or not signed else "long"
            lines = [f"{rtype} r = {full};"]
            if signed:
                lines.append(f"if (r < {MIN}) return {MIN};")
            lines += [f"if (r > {MAX}) return {MAX};", f"return ({T})r;"]
            return "\n".join(lines)
        if name == "mul24":
            return f"return ({T})(({U}){x} * ({U}){y});"
        if name == "mad24":
            return f"return ({T})(({U}){x} * ({U}){y} + ({U}){z});"
        if name == "rotate":
            return f"""{U} v = ({U}){x};
unsigned int n = (unsigned int)(({U}){y} & {bits - 1});
return ({T})({U})((v << n) | (v >> (({bits} - n) & {bits - 1})));"""
        if name == "max":
            return f"return {x} < {y} ? {y} : {x};"
        if name == "min":
            return f"return {y} < {x} ? {y} : {x};"
        if name == "clamp":
            return f"{T} m = {x} < {y} ? {y} : {x};\nreturn {z} < m ? {z} : m;"
        raise CodegenError(f"no C lowering of builtin '{name}'")

    return body


def _upsample_body(ret: ScalarType, hi_elem: ScalarType) -> Callable[[Emitter, Sequence[str]], str]:
    R = C_SCALAR_NAMES[ret.name]
    UR = _unsigned(ret)
    UH = _unsigned(hi_elem)

    def body(e: Emitter, a: Sequence[str]) -> str:
        return f"return ({R})((({UR})({UH}){a[0]} << {hi_elem.bits}) | ({UR}){a[1]});"

    return body


def lower_integer(e: Emitter, ov: Overload) -> str:
    params = scalar_params(ov)
    ret = elem_of(ov.ret)
    if ov.name == "upsample":
        body = _upsample_body(ret, elem_of(ov.params[0]))
    else:
        body = _integer_body(ov.name, elem_of(ov.params[0]))
    helper = define_scalar_helper(e, ov.name, ScalarImpl(ret, params, body))
    return define_elementwise(e, ov, helper)


# ---------------------------------------------------------------- common functions


def _common_body(name: str, elem: ScalarType) -> Callable[[Emitter, Sequence[str]], str]:
    F = C_SCALAR_NAMES[elem.name]

    def lit(v: str) -> str:
        return float_literal(v, elem)

    def body(e: Emitter, a: Sequence[str]) -> str:
        x, y, z = (list(a) + ["", ""])[:3]
        if name == "clamp":
            # fmin(fmax(x, lo), hi) by selects: the C library's calls kept a work-item loop
            # around clamp from vectorizing
            return (f"{F} m, r;\n{max_min_selects('fmax', x, y, 'm', elem)}\n"
                    f"{max_min_selects('fmin', 'm', z, 'r', elem)}\nreturn r;")
        if name == "degrees":
            return f"return {x} * {lit('57.295779513082320876798154814105')};"
        if name == "radians":
            return f"return {x} * {lit('0.017453292519943295769236907684886')};"
        if name == "max":
            return f"return {x} < {y} ? {y} : {x};"
        if name == "min":
            return f"return {y} < {x} ? {y} : {x};"
        if name == "mix":
            return f"return {x} + ({y} - {x}) * {z};"
        if name == "step":
            return f"return {y} < {x} ? {lit('0.0')} : {lit('1.0')};"
        if name == "smoothstep":
            # clamped by selects as clamp is: fminf and fmaxf kept the loop scalar
            u = f"({z} - {x}) / ({y} - {x})"
            return (f"{F} q = {u}, m, t;\n{max_min_selects('fmax', 'q', lit('0.0'), 'm', elem)}\n"
                    f"{max_min_selects('fmin', 'm', lit('1.0'), 't', elem)}\n"
                    f"return t * t * ({lit('3.0')} - {lit('2.0')} * t);")
        if name == "sign":
            return sign_body(elem, x)
        raise CodegenError(f"no C lowering of builtin '{name}'")

    return body


def lower_common(e: Emitter, ov: Overload) -> str:
    elem = elem_of(ov.ret)
    impl = ScalarImpl(elem, scalar_params(ov), _common_body(ov.name, elem))
    return define_elementwise(e, ov, define_scalar_helper(e, ov.name, impl))


# ---------------------------------------------------------------- geometric functions


def _components(t: Type, v: str) -> list[str]:
    if isinstance(t, VectorType):
        return [f"{v}[{i}]" for i in range(t.width)]
    return [v]


def _define_length(e: Emitter, t: Type) -> str:
    """Length without overflow or underflow: float sums squares in double; double scales by the
    exponent of the largest component first."""
    name = f"__ppcl_h_length_{t}"
    elem = elem_of(t)

    def make() -> str:
        comps = _components(t, "p")
        if elem.name == "float":
            terms = " + ".join(f"(double){c} * {c}" for c in comps)
            return function("float", name, (t,), ("p",), f"return (float)sqrt({terms});")
        n = len(comps)
        load = "double c[] = {" + ", ".join(comps) + "};"
        return function("double", name, (t,), ("p",), f"""{load}
double m = 0.0;
int nan = 0;
for (int i = 0; i < {n}; ++i) {{
    if (isinf(c[i])) return INFINITY;
    nan |= isnan(c[i]);
    if (fabs(c[i]) > m) m = fabs(c[i]);
}}
if (nan) return NAN;
if (m == 0.0) return 0.0;
int ex = ilogb(m);
double s = 0.0;
for (int i = 0; i < {n}; ++i) {{
    double q = scalbn(c[i], -ex);
    s += q * q;
}}
return scalbn(sqrt(s), ex);""")

    return e.define(name, make)


def _dot_expr(t: Type, x: str, y: str) -> str:
    return " + ".join(f"{a} * {b}" for a, b in zip(_components(t, x), _components(t, y)))


def _normalize_body(t: Type, fast: bool) -> Callable[[Sequence[str]], str]:
    elem = elem_of(t)
    comps = _components(t, "p")
    n = len(comps)
    T = c_type(t)

    def body(a: Sequence[str]) -> str:
        p = a[0]
        if fast:
            return f"""float s = {_dot_expr(t, p, p)};
if (s == 0.0f) return {p};
return {p} * (1.0f / sqrtf(s));"""
        one, zero = float_literal("1.0", elem), float_literal("0.0", elem)
        cs = "copysignf" if elem.name == "float" else "copysign"
        if not isinstance(t, VectorType):
            return f"if ({p} == {zero} || isnan({p})) return {p};\nreturn {cs}({one}, {p});"
        # section 6.12.5: an infinite element makes every element +-1 (the infinite ones)
        # or 0 * v[i], which keeps a NaN; any NaN makes the whole result NaN
        lines = [f"{T} q = {p};", "int inf = 0;"]
        lines.append(f"for (int i = 0; i < {n}; ++i) inf |= isinf(q[i]);")
        lines.append(f"if (inf) for (int i = 0; i < {n}; ++i) "
                     f"q[i] = isinf(q[i]) ? {cs}({one}, q[i]) : {zero} * q[i];")
        if elem.name == "float":
            lines += [
                "double s = " + " + ".join(f"(double)q[{i}] * q[{i}]" for i in range(n)) + ";",
                f"if (s == 0.0) return {p};",
                "double len = sqrt(s);",
                f"for (int i = 0; i < {n}; ++i) q[i] = (float)(q[i] / len);",
                "return q;",
            ]
        else:
            lines += [
                "double m = 0.0;",
                "int nan = 0;",
                f"for (int i = 0; i < {n}; ++i) {{ m = fabs(q[i]) > m ? fabs(q[i]) : m; "
                "nan |= isnan(q[i]); }",
                f"if (nan) {{ for (int i = 0; i < {n}; ++i) q[i] = NAN; return q; }}",
                f"if (m == 0.0) return {p};",
                "int ex = ilogb(m);",
                f"for (int i = 0; i < {n}; ++i) q[i] = scalbn(q[i], -ex);",
                "double len = sqrt(" + " + ".join(f"q[{i}] * q[{i}]" for i in range(n)) + ");",
                f"for (int i = 0; i < {n}; ++i) q[i] = q[i] / len;",
                "return q;",
            ]
        return "\n".join(lines)

    return body


def lower_geometric(e: Emitter, ov: Overload) -> str:
    t = ov.params[0]
    name = ov.name
    if name == "dot":
        return define_overload(e, ov, lambda a: f"return {_dot_expr(t, a[0], a[1])};")
    if name == "cross":
        return define_overload(e, ov, lambda a: f"""{c_type(t)} r = {{0}};
r[0] = {a[0]}[1] * {a[1]}[2] - {a[0]}[2] * {a[1]}[1];
r[1] = {a[0]}[2] * {a[1]}[0] - {a[0]}[0] * {a[1]}[2];
r[2] = {a[0]}[0] * {a[1]}[1] - {a[0]}[1] * {a[1]}[0];
return r;""")
    if name in ("length", "distance"):
        if e.fast_math and elem_of(t).name == "float":
            length = ""
        else:
            length = _define_length(e, t)
        if name == "length":
            if not length:
                return define_overload(e, ov, lambda a: f"return sqrtf({_dot_expr(t, a[0], a[0])});")
            return define_overload(e, ov, lambda a: f"return {length}({a[0]});")
        if not length:
            return define_overload(e, ov, lambda a: f"""{c_type(t)} d = {a[0]} - {a[1]};
return sqrtf({_dot_expr(t, 'd', 'd')});""")
        return define_overload(e, ov, lambda a: f"return {length}({a[0]} - {a[1]});")
    if name in ("fast_length", "fast_distance"):
        if name == "fast_length":
            return define_overload(e, ov, lambda a: f"return sqrtf({_dot_expr(t, a[0], a[0])});")
        return define_overload(e, ov, lambda a: f"""{c_type(t)} d = {a[0]} - {a[1]};
return sqrtf({_dot_expr(t, 'd', 'd')});""")
    if name == "normalize":
        return define_overload(e, ov, _normalize_body(t, fast=e.fast_math and isinstance(
            t, VectorType) and elem_of(t).name == "float"))
    if name == "fast_normalize":
        if not isinstance(t, VectorType):
            return define_overload(e, ov, lambda a: f"return {a[0]} == 0.0f ? {a[0]} : copysignf(1.0f, {a[0]});")
        return define_overload(e, ov, _normalize_body(t, fast=True))
    raise CodegenError(f"no C lowering of builtin '{name}'")


# ---------------------------------------------------------------- relational functions

_COMPARISONS = {"isequal": "==", "isnotequal": "!=", "isgreater": ">", "isgreaterequal": ">=",
                "isless": "<", "islessequal": "<="}
_CLASSIFY = {"isfinite": "isfinite", "isinf": "isinf", "isnan": "isnan", "isnormal": "isnormal",
             "signbit": "signbit"}


_SAME_SIZE_INT = {"float": "int", "double": "long"}


def _signed_vector(t: Type) -> str:
    """The signed integer vector type with the lanes and lane size of vector ``t``."""
    assert isinstance(t, VectorType)
    if t.elem.is_integer:
        return f"ppcl_{t.elem.with_signedness(True).name}{t.width}"
    return f"ppcl_{_SAME_SIZE_INT[t.elem.name]}{t.width}"


def lower_relational(e: Emitter, ov: Overload) -> str:
    name = ov.name
    t = ov.params[0]
    if name in ("any", "all"):
        comps = _components(t, "a0")
        op = " | " if name == "any" else " & "
        return define_overload(e, ov, lambda a: f"return ({op.join(comps)}) < 0;")
    if name == "select":
        return _lower_select(e, ov)
    if name == "bitselect":
        return _lower_bitselect(e, ov)
    if isinstance(ov.ret, VectorType):
        RT = c_type(ov.ret)
        if name in _COMPARISONS:
            return define_overload(e, ov, lambda a: f"return ({RT})({a[0]} {_COMPARISONS[name]} {a[1]});")
        if name == "isnan":
            return define_overload(e, ov, lambda a: f"return ({RT})({a[0]} != {a[0]});")
        if name == "isordered":
            return define_overload(
                e, ov, lambda a: f"return ({RT})(({a[0]} == {a[0]}) & ({a[1]} == {a[1]}));")
        if name == "islessgreater":
            return define_overload(
                e, ov, lambda a: f"return ({RT})(({a[0]} < {a[1]}) | ({a[0]} > {a[1]}));")
        if name == "isunordered":
            return define_overload(
                e, ov, lambda a: f"return ({RT})(({a[0]} != {a[0]}) | ({a[1]} != {a[1]}));")
    elem = elem_of(t)
    ret = elem_of(ov.ret)

    def body(_: Emitter, a: Sequence[str]) -> str:
        if name in _COMPARISONS:
            return f"return {a[0]} {_COMPARISONS[name]} {a[1]};"
        if name == "isordered":
            return f"return !isunordered({a[0]}, {a[1]});"
        if name == "islessgreater":
            return f"return islessgreater({a[0]}, {a[1]});"
        if name == "isunordered":
            return f"return isunordered({a[0]}, {a[1]});"
        if name == "signbit":
            # the sign bit read from the bits: gcc 12 fails with an internal compiler error
            # vectorizing the C library's signbit over 2 or 8 float lanes
            if elem.name == "float":
                return f"return (int)(__ppcl_float_bits({a[0]}) >> 31);"
            return f"return (int)(__ppcl_double_bits({a[0]}) >> 63);"
        return f"return {_CLASSIFY[name]}({a[0]}) != 0;"

    params = (elem,) * len(ov.params)
    helper = define_scalar_helper(e, name, ScalarImpl(ret, params, body))
    return define_elementwise(e, ov, helper, true_is_minus_one=True)


def _lower_select(e: Emitter, ov: Overload) -> str:
    t = ov.ret
    if not isinstance(t, VectorType):
        return define_overload(e, ov, lambda a: f"return {a[2]} ? {a[1]} : {a[0]};")
    IV = _signed_vector(t)
    bits = t.elem.bits
    return define_overload(e, ov, lambda a: f"""{IV} m = ({IV}){a[2]} >> {bits - 1};
return ({c_type(t)})((({IV}){a[0]} & ~m) | (({IV}){a[1]} & m));""")


def _lower_bitselect(e: Emitter, ov: Overload) -> str:
    t = ov.ret
    elem = elem_of(t)
    if isinstance(t, VectorType):
        IV = _signed_vector(t)
        return define_overload(e, ov, lambda a: f"""{IV} c = ({IV}){a[2]};
return ({c_type(t)})((({IV}){a[0]} & ~c) | (({IV}){a[1]} & c));""")
    if elem.is_integer:
        return define_overload(e, ov, lambda a: f"return ({a[0]} & ~{a[2]}) | ({a[1]} & {a[2]});")
    bits_fn, from_fn = (("__ppcl_float_bits", "__ppcl_bits_float") if elem.name == "float"
                        else ("__ppcl_double_bits", "__ppcl_bits_double"))
    return define_overload(e, ov, lambda a: f"""__typeof__({bits_fn}(0)) c = {bits_fn}({a[2]});
return {from_fn}(({bits_fn}({a[0]}) & ~c) | ({bits_fn}({a[1]}) & c));""")


# ---------------------------------------------------------------- shuffle, shuffle2


def lower_shuffle(e: Emitter, ov: Overload) -> str:
    src = ov.params[0]
    m = width_of(src)
    n = width_of(ov.ret)
    if ov.name == "shuffle":
        return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r;
for (int i = 0; i < {n}; ++i) r[i] = {a[0]}[{a[1]}[i] % {m}];
return r;""")
    return define_overload(e, ov, lambda a: f"""{c_type(ov.ret)} r;
for (int i = 0; i < {n}; ++i) {{
    unsigned int k = (unsigned int)({a[2]}[i] % {2 * m});
    r[i] = k < {m} ? {a[0]}[k] : {a[1]}[k - {m}];
}}
return r;""")


# ---------------------------------------------------------------- atomics and fences

_FETCH_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor"}


def lower_atomic(e: Emitter, ov: Overload) -> str:
    op = ov.name.split("_", 1)[1]
    ptr = ov.params[0]
    assert isinstance(ptr, PointerType)
    T = c_type(ov.ret)
    if ptr.space is AddressSpace.LOCAL:
        return _lower_local_atomic(e, ov, op, T)
    if op in _FETCH_OPS:
        return define_overload(
            e, ov, lambda a: f"return __atomic_fetch_{_FETCH_OPS[op]}({a[0]}, {a[1]}, __ATOMIC_RELAXED);")
    if op in ("inc", "dec"):
        fetch = "add" if op == "inc" else "sub"
        return define_overload(
            e, ov, lambda a: f"return __atomic_fetch_{fetch}({a[0]}, 1, __ATOMIC_RELAXED);")
    if op == "xchg":
        if elem_of(ptr).is_float:
            return define_overload(e, ov, lambda a: f"""{T} r;
__atomic_exchange({a[0]}, &{a[1]}, &r, __ATOMIC_SEQ_CST);
return r;""")
        return define_overload(
            e, ov, lambda a: f"return __atomic_exchange_n({a[0]}, {a[1]}, __ATOMIC_SEQ_CST);")
    if op == "cmpxchg":
        return define_overload(e, ov, lambda a: f"""{T} old = {a[1]};
__atomic_compare_exchange_n({a[0]}, &old, {a[2]}, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
return old;""")
    if op in ("min", "max"):
        better = "<" if op == "min" else ">"
        return define_overload(e, ov, lambda a: f"""{T} old = __atomic_load_n({a[0]}, __ATOMIC_RELAXED);
while ({a[1]} {better} old
       && !__atomic_compare_exchange_n({a[0]}, &old, {a[1]}, 1, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED)) {{
}}
return old;""")
    raise CodegenError(f"no C lowering of builtin '{ov.name}'")


_LOCAL_UPDATES = {"add": "old + {v}", "sub": "old - {v}", "and": "old & {v}", "or": "old | {v}",
                  "xor": "old ^ {v}", "inc": "old + 1", "dec": "old - 1", "xchg": "{v}",
                  "min": "{v} < old ? {v} : old", "max": "{v} > old ? {v} : old"}


def _lower_local_atomic(e: Emitter, ov: Overload, op: str, T: str) -> str:
    """``__local`` memory belongs to one work-group, and the CPU device runs all of a group's
    work-items in sequence on one thread: its atomics need no locked instruction."""
    if op == "cmpxchg":
        return define_overload(e, ov, lambda a: f"""{T} *p = ({T} *){a[0]};
{T} old = *p;
if (old == {a[1]}) *p = {a[2]};
return old;""")
    update = _LOCAL_UPDATES.get(op)
    if update is None:
        raise CodegenError(f"no C lowering of builtin '{ov.name}'")
    return define_overload(e, ov, lambda a: f"""{T} *p = ({T} *){a[0]};
{T} old = *p;
*p = {update.format(v=a[1] if len(a) > 1 else "")};
return old;""")


_FENCES = {"mem_fence": "__ATOMIC_SEQ_CST", "read_mem_fence": "__ATOMIC_ACQUIRE",
           "write_mem_fence": "__ATOMIC_RELEASE"}


def lower_sync(e: Emitter, ov: Overload) -> str:
    order = _FENCES.get(ov.name)
    if order is None:
        raise CodegenError(f"builtin '{ov.name}' is lowered by the work-group compiler")
    return define_overload(e, ov, lambda a: f"(void){a[0]};\n__atomic_thread_fence({order});")


def lower_async(e: Emitter, ov: Overload) -> str:
    if ov.name != "prefetch":
        raise CodegenError(f"builtin '{ov.name}' is lowered by the work-group compiler")
    return define_overload(e, ov, lambda a: f"(void){a[0]};\n(void){a[1]};")


_FAMILIES: dict[str, Callable[[Emitter, Overload], str]] = {
    "math": lower_math,
    "native": lower_math,
    "integer": lower_integer,
    "common": lower_common,
    "geometric": lower_geometric,
    "relational": lower_relational,
    "vload": lower_vload,
    "vstore": lower_vstore,
    "convert": lower_convert,
    "reinterpret": lower_reinterpret,
    "shuffle": lower_shuffle,
    "atomic": lower_atomic,
    "sync": lower_sync,
    "async": lower_async,
    "image": lower_image,
}
