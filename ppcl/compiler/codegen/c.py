"""C with GCC vector extensions, the language of the CPU backend.

Only the dialect table lives here: address spaces vanish, OpenCL scalar names become C types,
vector types become ``ppcl_<type><n>`` typedefs of GCC vectors (3-component vectors are stored
4 wide, as in OpenCL), vector literals become compound literals and swizzles become subscripts or
``__builtin_shufflevector``. Lowering of builtins and of work-item functions belongs to the
backend, through the ``call`` hook.
"""

from __future__ import annotations

from ppcl.compiler.codegen.cstyle import (
    BINARY_PREC,
    PREC_ASSIGN,
    PREC_POSTFIX,
    PREC_UNARY,
    CodegenError,
    CStylePrinter,
    Dialect,
)
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.conversions import signed_integer_of_size, wrap
from ppcl.compiler.ir.types import (
    SCALAR_TYPES,
    VECTOR_WIDTHS,
    AddressSpace,
    VectorType,
    scalar_of,
    width_of,
)

VECTOR_PREFIX = "ppcl_"

# OpenCL scalar -> C spelling; ``long`` is 64-bit on the LP64 hosts the CPU backend targets.
C_SCALAR_NAMES: dict[str, str] = {
    "bool": "_Bool",
    "char": "signed char",
    "uchar": "unsigned char",
    "short": "short",
    "ushort": "unsigned short",
    "int": "int",
    "uint": "unsigned int",
    "long": "long",
    "ulong": "unsigned long",
    # storage only in OpenCL C 1.2 (no cl_khr_fp16): a half is its 16-bit pattern, as the
    # builtins that load and store it take it (a _Float16 pointer passed to them was an
    # incompatible pointer, an error from gcc 14 on)
    "half": "unsigned short",
    "float": "float",
    "double": "double",
}


# Every name of the program's IR is spelled with this prefix in C, so that no program name
# meets a name of the C library, its macros or the compiler's builtins (``puts``, ``FILE``,
# ``errno``, ``__builtin_*``), nor a name the generated C gives its own things (``__lx``,
# ``__ctx_*``, masks ``__ppcl_*``, ``ppcl_run_<kernel>``), which it spells without the prefix:
# the C library uses no name starting ``ppcl_u_``, and the generated C names its own things
# ``__*`` or ``ppcl_<word>`` with no ``u_`` after ``ppcl_``.
USER_PREFIX = "ppcl_u_"


def c_identifier(name: str) -> str:
    """The C spelling of a name of the IR: ``x`` -> ``ppcl_u_x``."""
    return USER_PREFIX + name


def c_vector_name(t: VectorType) -> str:
    return f"{VECTOR_PREFIX}{t.elem.name}{t.width}"


def vector_typedefs() -> str:
    """The typedefs that give every OpenCL vector type its C name."""
    lines = []
    for elem in SCALAR_TYPES:
        if elem.is_bool:
            continue
        for width in VECTOR_WIDTHS:
            t = VectorType(elem, width)
            lines.append(f"typedef {C_SCALAR_NAMES[elem.name]} {c_vector_name(t)}"
                         f" __attribute__((vector_size({t.size})));")
    return "\n".join(lines) + "\n"


def _is_simple(e: ir.Expr) -> bool:
    """A side-effect-free access that may be repeated: names, members, indices by names."""
    if isinstance(e, ir.VarRef | ir.IntLit | ir.FloatLit):
        return True
    if isinstance(e, ir.Member | ir.Swizzle):
        return _is_simple(e.base)
    if isinstance(e, ir.Index):
        return _is_simple(e.base) and _is_simple(e.index)
    if isinstance(e, ir.Cast) and e.implicit:
        return _is_simple(e.operand)
    return False


def _components(p: CStylePrinter, e: ir.Expr, temp: str) -> list[str]:
    """The scalar components of ``e``, each as an expression text; ``temp`` names the
    temporary that holds ``e`` when it cannot be repeated."""
    if width_of(e.type) == 1:
        return [p.expr(e, PREC_ASSIGN)]
    if isinstance(e, ir.Cast) and e.implicit:
        return _components(p, e.operand, temp)
    if isinstance(e, ir.Swizzle) and _is_simple(e.base):
        base = p.expr(e.base, PREC_POSTFIX)
        return [f"{base}[{i}]" for i in e.indices]
    base = p.expr(e, PREC_POSTFIX) if _is_simple(e) else temp
    return [f"{base}[{i}]" for i in range(width_of(e.type))]


def _splat(p: CStylePrinter, vector: VectorType, scalar: ir.Expr) -> str:
    """Every component set to ``scalar``, which is evaluated once."""
    if scalar.type == vector.elem:
        value = p.expr(scalar, PREC_UNARY)
    else:  # GCC refuses a scalar that would be narrowed on its way into the vector
        value = f"({p.type_name(vector.elem)}){p.expr(scalar, PREC_UNARY)}"
    return f"(({c_vector_name(vector)}){{}} + {value})"


def c_vector_literal(p: CStylePrinter, e: ir.Expr) -> str | None:
    """A compound literal of the components; vector parts that cannot be repeated are held in
    temporaries of a GNU statement expression, so each part is evaluated once."""
    assert isinstance(e, ir.VectorLiteral) and isinstance(e.type, VectorType)
    if len(e.elems) == 1 and width_of(e.elems[0].type) == 1:
        return _splat(p, e.type, e.elems[0])
    temps: list[str] = []
    parts: list[str] = []
    for elem in e.elems:
        temp = f"__ppcl_part{len(temps)}"
        components = _components(p, elem, temp)
        parts += components
        if any(part.startswith(temp + "[") for part in components):
            temps.append(f"{p.declaration(elem.type, temp)} = {p.expr(elem, PREC_ASSIGN)};")
    literal = f"(({c_vector_name(e.type)}){{{', '.join(parts)}}})"
    if not temps:
        return literal
    return f"({{ {' '.join(temps)} {literal}; }})"


def c_swizzle(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``v[2]`` for one component, ``__builtin_shufflevector`` for several; a base that cannot
    be repeated is held in a temporary of a GNU statement expression."""
    assert isinstance(e, ir.Swizzle)
    if len(e.indices) == 1:
        return f"{p.expr(e.base, PREC_POSTFIX)}[{e.indices[0]}]"
    indices = list(e.indices)
    if len(indices) == 3:
        indices.append(-1)  # a 3-component result is stored 4 wide; the last lane is unused
    selection = ", ".join(map(str, indices))
    if _is_simple(e.base):
        base = p.expr(e.base, PREC_ASSIGN)
        return f"__builtin_shufflevector({base}, {base}, {selection})"
    temp = f"{p.declaration(e.base.type, '__ppcl_base')} = {p.expr(e.base, PREC_ASSIGN)};"
    return f"({{ {temp} __builtin_shufflevector(__ppcl_base, __ppcl_base, {selection}); }})"


def c_cast(p: CStylePrinter, e: ir.Expr) -> str | None:
    """Scalar-to-vector conversions, implicit or explicit, become a splat; others are C's."""
    assert isinstance(e, ir.Cast)
    if isinstance(e.type, VectorType) and width_of(e.operand.type) == 1:
        return _splat(p, e.type, e.operand)
    return None


def c_unary(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``!v`` on a vector is ``v == 0`` (GCC has no ``!`` on vectors): -1 where a component
    is zero, as OpenCL's ``!`` gives."""
    assert isinstance(e, ir.Unary)
    if e.op != "!" or not isinstance(e.operand.type, VectorType):
        return None
    return f"({p.expr(e.operand, BINARY_PREC['=='] + 1)} == 0)"


def c_binary(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``a && b`` and ``a || b`` on vectors compare each side with zero and combine the -1/0
    masks bitwise (GCC has no vector ``&&``; OpenCL evaluates both sides of a vector one)."""
    assert isinstance(e, ir.Binary)
    if e.op not in ("&&", "||") or not isinstance(e.type, VectorType):
        return None
    operand = BINARY_PREC["!="] + 1
    combine = "&" if e.op == "&&" else "|"
    return (f"(({p.expr(e.lhs, operand)} != 0) {combine} "
            f"({p.expr(e.rhs, operand)} != 0))")


def c_conditional(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``c ? a : b`` with a vector condition selects per component by the sign bit of ``c``
    (OpenCL's ``select(b, a, c)``); C has no vector ``?:``, so the components are chosen with
    a mask through same-sized integer vectors (GCC's vector casts keep the bits)."""
    assert isinstance(e, ir.Conditional)
    if not isinstance(e.cond.type, VectorType):
        return None
    mask = c_vector_name(VectorType(signed_integer_of_size(e.cond.type.elem.size),
                                    e.cond.type.width))
    result = c_vector_name(e.type) if isinstance(e.type, VectorType) else p.type_name(e.type)
    cond = p.expr(e.cond, PREC_ASSIGN)
    then = p.expr(e.then, PREC_ASSIGN)
    otherwise = p.expr(e.otherwise, PREC_ASSIGN)
    return (f"({{ {mask} __ppcl_mask = ({mask})({cond}) < 0; ({result})((({mask})({then}) & "
            f"__ppcl_mask) | (({mask})({otherwise}) & ~__ppcl_mask)); }})")


def c_unroll(count: int) -> str | None:
    """GCC's spelling of ``#pragma unroll N``; it has none for "as far as possible", where its
    own complete unrolling of constant trip counts decides."""
    return None if count == 0 else f"#pragma GCC unroll {count}"


def c_vec_step(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(e, ir.VecStep)
    return str(e.value)


def c_assign_swizzle(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``v.z = x`` is ``v[2] = x``; a multi-component target needs a statement-level expansion
    that the CPU backend does before printing."""
    assert isinstance(e, ir.Assign) and isinstance(e.target, ir.Swizzle)
    if len(e.target.indices) == 1:
        return None
    raise CodegenError(f"assignment to swizzle .{e.target.spelling} must be expanded before "
                       "printing C")


def _constant_divisor(e: ir.Expr) -> int | None:
    """The value of a divisor that is an integer constant, through casts (each converting the
    value, so ``(int)4294967296L`` is 0) and splats."""
    if isinstance(e, ir.IntLit):
        return wrap(e.value, e.type)
    if isinstance(e, ir.Cast):
        elem = scalar_of(e.type)
        inner = _constant_divisor(e.operand)
        if elem is None or not elem.is_integer or inner is None:
            return None
        return wrap(inner, elem)
    if isinstance(e, ir.VectorLiteral) and len(e.elems) == 1:
        return _constant_divisor(e.elems[0])
    return None


def c_divide(p: CStylePrinter, e: ir.Expr) -> str | None:
    """Integer ``/`` and ``%`` that never trap: OpenCL C gives an unspecified value for a zero
    divisor and for the most negative value divided by -1, where C's division raises SIGFPE.
    The ``PPCL_DIV`` macros of the unit's prelude divide by 1 in those cases. A constant
    divisor other than 0 and -1 needs no check and keeps C's operator (and its strength
    reduction)."""
    if isinstance(e, ir.Binary):
        op, target, dividend, divisor, t = e.op, None, e.lhs, e.rhs, e.type
    else:
        assert isinstance(e, ir.Assign)
        op, target, dividend, divisor, t = e.op[0], e.target, e.target, e.value, e.value.type
    elem = scalar_of(t)
    if elem is None or not elem.is_integer:
        return None
    constant = _constant_divisor(divisor)
    if constant is not None and constant != 0 and (constant != -1 or not elem.is_signed):
        return None
    kind = "V" if isinstance(t, VectorType) else "S"
    sign = "S" if elem.is_signed else "U"
    smallest = f"(-{2 ** (elem.bits - 1) - 1} - 1)" if elem.is_signed and elem.bits < 64 \
        else "(-0x7fffffffffffffffL - 1)" if elem.is_signed else "0"
    value = p.expr(divisor, PREC_ASSIGN)
    if target is None:
        dividend_text = p.expr(dividend, PREC_ASSIGN)
        return f"PPCL_{sign}DIV_{kind}({op}, {p.type_name(t)}, {dividend_text}, {value}, " \
               f"{smallest})"
    if _is_simple(target):
        place = p.expr(target, PREC_UNARY)
        return f"({place} = PPCL_{sign}DIV_{kind}({op}, {p.type_name(t)}, {place}, {value}, " \
               f"{smallest}))"
    place = p.expr(target, PREC_POSTFIX)
    pointer = f"__typeof__({place}) *__ppcl_place = &{place};"
    return f"({{ {pointer} *__ppcl_place = PPCL_{sign}DIV_{kind}({op}, {p.type_name(t)}, " \
           f"*__ppcl_place, {value}, {smallest}); }})"


C = Dialect(
    name="c",
    kernel_qualifier="",
    address_spaces={space: "" for space in AddressSpace},
    scalar_names=C_SCALAR_NAMES,
    vector_type=c_vector_name,
    restrict="restrict",
    inline="static inline",
    kernel_attributes=False,
    identifier=c_identifier,
    constant_names=False,
    vector_literal=c_vector_literal,
    swizzle=c_swizzle,
    cast=c_cast,
    vec_step=c_vec_step,
    unary=c_unary,
    binary=c_binary,
    conditional=c_conditional,
    assign_swizzle=c_assign_swizzle,
    divide=c_divide,
    masks_shift_count="all",
    unroll_pragma=c_unroll,
)

_PRINTER = CStylePrinter(C)


def print_c(node: object) -> str:
    """C text of a module, declaration, statement, expression or type."""
    return _PRINTER.print(node)

