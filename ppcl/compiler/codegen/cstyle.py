"""The one printer of the C family: OpenCL C, C for the CPU backend, and CUDA.

``CStylePrinter`` prints IR as C text: expressions with C precedence and the fewest parentheses
that keep the tree, statements with braces around every body (so printing, parsing and printing
again gives the same text), and declarations with C declarator syntax (pointers to arrays, arrays
of pointers, qualifiers after ``*``). What differs between languages -- kernel qualifier, address
space keywords, scalar and vector type names, vector literals, swizzles, builtin calls -- is a
``Dialect``: a table of spellings plus a few hooks, not a subclass.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import BUILTIN_CONSTANTS
from ppcl.compiler.ir.conversions import promote
from ppcl.compiler.ir.types import (
    AddressSpace,
    ArrayType,
    EnumType,
    FunctionType,
    ImageType,
    OpaqueType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    VoidType,
)

INDENT = "    "
_SHIFTS = ("<<", ">>")

# C precedence levels, loosest first; a sub-expression is parenthesized when its level is below
# the level its position requires.
PREC_COMMA = 1
PREC_ASSIGN = 2
PREC_COND = 3
PREC_UNARY = 15  # prefix operators, casts, sizeof, vector literals
PREC_POSTFIX = 16  # calls, indexing, members, swizzles, postfix ++/--
PREC_PRIMARY = 17  # names, literals, parenthesized expressions

BINARY_PREC: dict[str, int] = {
    "||": 4,
    "&&": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "==": 9, "!=": 9,
    "<": 10, "<=": 10, ">": 10, ">=": 10,
    "<<": 11, ">>": 11,
    "+": 12, "-": 12,
    "*": 13, "/": 13, "%": 13,
}


class CodegenError(Exception):
    """A construct the target dialect cannot spell at this place."""


ExprHook = Callable[["CStylePrinter", ir.Expr], "str | None"]


def gnu_attribute(items: Sequence[str]) -> str:
    return f"__attribute__(({', '.join(items)}))"


def same_name(name: str) -> str:
    return name


def opencl_unroll(count: int) -> str | None:
    return "#pragma unroll" if count == 0 else f"#pragma unroll {count}"


def opencl_vector_name(t: VectorType) -> str:
    return f"{t.elem.name}{t.width}"


@dataclass(frozen=True)
class Dialect:
    """The spellings of one C-family language.

    Expression hooks receive the printer and the node and return the text of a postfix or
    primary expression (they parenthesize their own result), or None to fall back to the
    default OpenCL C spelling.
    """

    name: str
    kernel_qualifier: str = "__kernel"
    address_spaces: Mapping[AddressSpace, str] = field(default_factory=lambda: {
        AddressSpace.PRIVATE: "",
        AddressSpace.GLOBAL: "__global",
        AddressSpace.LOCAL: "__local",
        AddressSpace.CONSTANT: "__constant",
    })
    # The spelling of the space a pointer points into, when it differs from the space of an
    # object (CUDA declares ``__shared__`` objects but has generic pointers); None: the same.
    pointee_spaces: Mapping[AddressSpace, str] | None = None
    function_qualifier: str = ""  # before every function that is not a kernel
    scalar_names: Mapping[str, str] = field(default_factory=dict)  # OpenCL name -> spelling
    vector_type: Callable[[VectorType], str] = opencl_vector_name
    restrict: str = "restrict"
    inline: str = "inline"
    attribute: Callable[[Sequence[str]], str] = gnu_attribute
    kernel_attributes: bool = True  # print reqd_work_group_size and friends
    infinity: str = "INFINITY"
    nan: str = "NAN"
    # The spelling of a name the program declares (function, variable, parameter, tag,
    # typedef, field, enumerator); names the compiler makes pass through unchanged.
    identifier: Callable[[str], str] = same_name
    # OpenCL's builtin constants (``FLT_MAX``, ``CLK_LOCAL_MEM_FENCE``) printed by name; False:
    # by value, for a language without OpenCL's headers to define them (C, CUDA).
    constant_names: bool = True
    # hooks, see the class docstring
    vector_literal: ExprHook | None = None
    swizzle: ExprHook | None = None
    cast: ExprHook | None = None  # consulted for implicit and explicit casts
    call: ExprHook | None = None  # builtin and user calls
    vec_step: ExprHook | None = None
    unary: ExprHook | None = None
    binary: ExprHook | None = None
    conditional: ExprHook | None = None  # ``c ? a : b``, e.g. with a vector condition
    # An assignment whose target is a swizzle; the default prints ``v.xy = e``.
    assign_swizzle: ExprHook | None = None
    assign: ExprHook | None = None  # any assignment (``+=`` as a multiply-add...)
    # Integer ``/`` and ``%`` and their compound assignments; the default prints C's operators.
    divide: ExprHook | None = None
    # OpenCL takes a shift count modulo the width of the shifted (promoted) element type; C
    # leaves a count out of range undefined, so the C dialect masks it explicitly: "all"
    # shifts, "scalar" ones only (CUDA, whose vector operators mask in its header), or none.
    masks_shift_count: str = ""
    # A kernel's parameter list and the statements that open its body, when the dialect's
    # kernels take their arguments otherwise than OpenCL's (CUDA's ``__local`` arguments).
    kernel_params: Callable[[CStylePrinter, ir.Function], list[str]] | None = None
    kernel_prologue: Callable[[CStylePrinter, ir.Function], list[str]] | None = None
    # The line before a loop of ``#pragma unroll N`` (0: unroll as far as possible), or None.
    unroll_pragma: Callable[[int], str | None] = opencl_unroll

    def space(self, space: AddressSpace) -> str:
        return self.address_spaces.get(space, "")


# ---------------------------------------------------------------- literals


def float32_repr(value: float) -> str:
    """The shortest decimal that reads back as the same single-precision value."""
    target = struct.pack("<f", value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            if struct.pack("<f", float(text)) == target:
                return text
        except OverflowError:  # a rounding of FLT_MAX past the largest float
            continue
    return f"{value:.9g}"


def _as_float_spelling(text: str) -> str:
    """Make a decimal spelling a floating literal (``1`` -> ``1.0``, ``1e+20`` stays)."""
    if "." in text or "e" in text:
        return text
    return text + ".0"


_SIGNED_MIN = {"int": -(2**31), "long": -(2**63)}
_INT_SUFFIX = {"int": "", "uint": "u", "long": "L", "ulong": "UL"}


# ---------------------------------------------------------------- the printer


class CStylePrinter:
    """Prints IR nodes in one dialect. Stateless between calls; one instance may be shared."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    # ------------------------------------------------------------ entry point

    def print(self, node: object) -> str:
        """Text of a module, top-level declaration, statement, expression or type."""
        if isinstance(node, ir.Module):
            return self.module(node)
        if isinstance(node, ir.Function | ir.TypeDef | ir.RecordDef | ir.EnumDef | ir.GlobalVar):
            return "\n".join(self.top_level(node)) + "\n"
        if isinstance(node, ir.Stmt):
            return "\n".join(self.stmt(node, 0)) + "\n"
        if isinstance(node, ir.Expr):
            return self.expr(node)
        if isinstance(node, Type):
            return self.type_name(node)
        raise TypeError(f"cannot print {type(node).__name__}")

    # ------------------------------------------------------------ types and declarations

    def name(self, name: str) -> str:
        """How the dialect spells a name the program declares."""
        return self.dialect.identifier(name)

    def base_type_name(self, t: Type) -> str:
        """The specifier of a type that has no declarator part."""
        if isinstance(t, ScalarType):
            return self.dialect.scalar_names.get(t.name, t.name)
        if isinstance(t, VectorType):
            return self.dialect.vector_type(t)
        if isinstance(t, StructType):
            return f"{'union' if t.is_union else 'struct'} {self.name(t.name)}"
        if isinstance(t, EnumType):
            return f"enum {self.name(t.name)}"
        if isinstance(t, VoidType):
            return "void"
        if isinstance(t, ImageType):
            return f"__{t.access} {t.name}"
        if isinstance(t, OpaqueType):
            return t.name
        raise TypeError(f"type {t} has a declarator part")

    def pointee_qualifiers(self, p: PointerType) -> list[str]:
        spaces = self.dialect.pointee_spaces
        quals = [self.dialect.space(p.space) if spaces is None else spaces.get(p.space, "")]
        quals += ["const"] * p.const + ["volatile"] * p.volatile
        return [q for q in quals if q]

    def declarator(self, t: Type, name: str, quals: Sequence[str] = ()) -> tuple[str, str]:
        """``(specifiers, declarator)`` declaring ``name`` of type ``t``; ``quals`` qualify
        the declared object itself (its address space, ``const``, ``volatile``)."""
        inner = name
        own = [q for q in quals if q]
        while True:
            if isinstance(t, PointerType):
                ptr_quals = own + ([self.dialect.restrict] if t.restrict else [])
                spelled = " ".join(q for q in ptr_quals if q)
                if spelled:
                    inner = f"*{spelled} {inner}" if inner else f"*{spelled}"
                else:
                    inner = "*" + inner
                if isinstance(t.pointee, ArrayType | FunctionType):
                    inner = f"({inner})"
                own = self.pointee_qualifiers(t)
                t = t.pointee
            elif isinstance(t, ArrayType):
                length = "" if t.length is None else str(t.length)
                inner = f"{inner}[{length}]"
                t = t.elem  # qualifiers of an array qualify its elements
            elif isinstance(t, FunctionType):
                params = [self.type_name(p) for p in t.params] + ["..."] * t.variadic
                inner = f"{inner}({', '.join(params)})"
                own = []
                t = t.ret
            else:
                return " ".join(own + [self.base_type_name(t)]), inner

    def declaration(self, t: Type, name: str, quals: Sequence[str] = ()) -> str:
        spec, decl = self.declarator(t, name, quals)
        if not decl:
            return spec
        return f"{spec} {decl}"

    def type_name(self, t: Type) -> str:
        """A type as written in a cast or ``sizeof``: ``__global const float *``."""
        return self.declaration(t, "")

    def object_qualifiers(self, space: AddressSpace, const: bool, volatile: bool) -> list[str]:
        quals = [self.dialect.space(space)] + ["const"] * const + ["volatile"] * volatile
        return [q for q in quals if q]

    def var_decls(self, decls: Sequence[ir.VarDecl]) -> str:
        """One declaration without the ``;``; declarators share the specifiers when they can
        (declarators of different specifiers are separate declarations, ``;``-separated)."""
        return "; ".join(self.decl_groups(decls))

    def decl_groups(self, decls: Sequence[ir.VarDecl]) -> list[str]:
        """The declarations of ``decls`` without their ``;``: one per run of declarators with
        the same specifiers."""
        groups: list[tuple[str, list[str]]] = []
        for d in decls:
            quals = self.object_qualifiers(d.space, d.const, d.volatile)
            spec, decl = self.declarator(d.type, self.name(d.name), quals)
            if d.align is not None:
                decl += " " + self.dialect.attribute([f"aligned({d.align})"])
            if d.init is not None:
                decl += " = " + self.initializer(d.init)
            if groups and groups[-1][0] == spec:
                groups[-1][1].append(decl)
            else:
                groups.append((spec, [decl]))
        return [f"{spec} {', '.join(ds)}" for spec, ds in groups]

    def initializer(self, e: ir.Expr) -> str:
        return self.expr(e, PREC_ASSIGN)

    def param(self, p: ir.Param) -> str:
        quals = self.object_qualifiers(AddressSpace.PRIVATE, p.const, p.volatile)
        return self.declaration(p.type, self.name(p.name), quals)

    # ------------------------------------------------------------ top level

    def module(self, m: ir.Module) -> str:
        # (lines, stands apart): functions and multi-line definitions get blank lines around them
        chunks: list[tuple[list[str], bool]] = []
        if m.extensions:
            chunks.append(([self.extension_pragma(name, on) for name, on in m.extensions], True))
        for d in m.decls:
            lines = self.top_level(d)
            chunks.append((lines, isinstance(d, ir.Function) or len(lines) > 1))
        out: list[str] = []
        for i, (lines, apart) in enumerate(chunks):
            if i > 0 and (apart or chunks[i - 1][1]):
                out.append("")
            out.extend(lines)
        return "\n".join(out) + "\n"

    def extension_pragma(self, name: str, enabled: bool) -> str:
        return f"#pragma OPENCL EXTENSION {name} : {'enable' if enabled else 'disable'}"

    def top_level(self, d: ir.TopLevel) -> list[str]:
        if isinstance(d, ir.Function):
            return self.function(d)
        if isinstance(d, ir.TypeDef):
            return [f"typedef {self.declaration(d.type, self.name(d.name))};"]
        if isinstance(d, ir.RecordDef):
            return self.record(d.type)
        if isinstance(d, ir.EnumDef):
            return self.enum(d.type)
        if isinstance(d, ir.GlobalVar):
            return [self.var_decls([d.decl]) + ";"]
        raise TypeError(f"not a top-level declaration: {type(d).__name__}")

    def record(self, t: StructType) -> list[str]:
        # attributes between the keyword and the tag, where pycparserext keeps them on the record
        attrs = ["packed"] * t.packed + ([f"aligned({t.aligned})"] if t.aligned else [])
        keyword = "union" if t.is_union else "struct"
        if attrs:
            keyword += " " + self.dialect.attribute(attrs)
        lines = [f"{keyword} {self.name(t.name)} {{"]
        for f in t.fields:
            decl = self.declaration(f.type, self.name(f.name))
            if f.align is not None:
                decl += " " + self.dialect.attribute([f"aligned({f.align})"])
            lines.append(f"{INDENT}{decl};")
        return lines + ["};"]

    def enum(self, t: Type) -> list[str]:
        if not isinstance(t, EnumType):
            raise TypeError(f"EnumDef of non-enum type {t}")
        items: list[str] = []
        implied = 0
        for enumerator, value in t.enumerators:
            name = self.name(enumerator)
            items.append(name if value == implied else f"{name} = {value}")
            implied = value + 1
        body = "".join(f"{INDENT}{item},\n" for item in items)
        return f"enum {self.name(t.name)} {{\n{body}}};".split("\n")

    def kernel_attributes(self, attrs: ir.KernelAttrs) -> list[str]:
        if not self.dialect.kernel_attributes:
            return []
        out: list[str] = []
        if attrs.reqd_work_group_size is not None:
            x, y, z = attrs.reqd_work_group_size
            out.append(self.dialect.attribute([f"reqd_work_group_size({x}, {y}, {z})"]))
        if attrs.work_group_size_hint is not None:
            x, y, z = attrs.work_group_size_hint
            out.append(self.dialect.attribute([f"work_group_size_hint({x}, {y}, {z})"]))
        if attrs.vec_type_hint is not None:
            out.append(self.dialect.attribute([f"vec_type_hint({self.type_name(attrs.vec_type_hint)})"]))
        return out

    def function_header(self, f: ir.Function) -> str:
        prefix: list[str] = []
        if f.is_kernel:
            prefix += [self.dialect.kernel_qualifier] + self.kernel_attributes(f.attrs)
        else:
            prefix.append(self.dialect.function_qualifier)
        if f.inline:
            prefix.append(self.dialect.inline)
        if f.is_kernel and self.dialect.kernel_params is not None:
            params = ", ".join(self.dialect.kernel_params(self, f))
        else:
            params = ", ".join(self.param(p) for p in f.params)
        header = self.declaration(f.ret, f"{self.name(f.name)}({params})")
        return " ".join([p for p in prefix if p] + [header])

    def function(self, f: ir.Function) -> list[str]:
        header = self.function_header(f)
        if f.body is None:
            return [header + ";"]
        prologue: list[str] = []
        if f.is_kernel and self.dialect.kernel_prologue is not None:
            prologue = [INDENT + line for line in self.dialect.kernel_prologue(self, f)]
        return [header, "{"] + prologue + self.stmts(f.body.stmts, 1) + ["}"]

    # ------------------------------------------------------------ statements

    def stmts(self, stmts: Sequence[ir.Stmt], level: int) -> list[str]:
        lines: list[str] = []
        for s in stmts:
            lines.extend(self.stmt(s, level))
        return lines

    def body(self, s: ir.Stmt, level: int) -> list[str]:
        """The statements of a loop or branch body, one level in; braces come from the caller."""
        if isinstance(s, ir.Block):
            return self.stmts(s.stmts, level + 1)
        return self.stmt(s, level + 1)

    def stmt(self, s: ir.Stmt, level: int) -> list[str]:
        ind = INDENT * level
        if isinstance(s, ir.Block):
            return [ind + "{"] + self.stmts(s.stmts, level + 1) + [ind + "}"]
        if isinstance(s, ir.ExprStmt):
            return [ind + self.full_expr(s.expr) + ";"]
        if isinstance(s, ir.DeclStmt):
            return [ind + self.var_decls(s.decls) + ";"]
        if isinstance(s, ir.If):
            return self.if_stmt(s, level)
        if isinstance(s, ir.For):
            init = ""
            if isinstance(s.init, ir.DeclStmt):
                decls = self.decl_groups(s.init.decls)
                if len(decls) > 1:
                    # a for-init holds one declaration: the declarators printed with different
                    # types (a dialect's widened int) are declared in a block around the loop
                    return ([ind + "{"] + [ind + INDENT + d + ";" for d in decls]
                            + self.stmt(replace(s, init=None), level + 1)
                            + [ind + "}"])
                init = self.var_decls(s.init.decls)
            elif isinstance(s.init, ir.ExprStmt):
                init = self.full_expr(s.init.expr)
            elif s.init is not None:
                raise CodegenError(f"for-init must be a declaration or expression, not {s.init}")
            cond = "" if s.cond is None else " " + self.full_expr(s.cond)
            step = "" if s.step is None else " " + self.full_expr(s.step)
            header = f"for ({init};{cond};{step}) {{"
            pragma = None if s.unroll is None else self.dialect.unroll_pragma(s.unroll)
            lines = [] if pragma is None else [ind + pragma]
            return lines + [ind + header] + self.body(s.body, level) + [ind + "}"]
        if isinstance(s, ir.While):
            return ([ind + f"while ({self.full_expr(s.cond)}) {{"] + self.body(s.body, level)
                    + [ind + "}"])
        if isinstance(s, ir.DoWhile):
            return ([ind + "do {"] + self.body(s.body, level)
                    + [ind + f"}} while ({self.full_expr(s.cond)});"])
        if isinstance(s, ir.Switch):
            lines = [ind + f"switch ({self.full_expr(s.expr)}) {{"]
            for item in s.body.stmts:
                is_label = isinstance(item, ir.Case | ir.Default)
                lines.extend(self.stmt(item, level + 1 if is_label else level + 2))
            return lines + [ind + "}"]
        if isinstance(s, ir.Case):
            return [ind + f"case {self.expr(s.expr, PREC_COND)}:"]
        if isinstance(s, ir.Default):
            return [ind + "default:"]
        if isinstance(s, ir.Break):
            return [ind + "break;"]
        if isinstance(s, ir.Continue):
            return [ind + "continue;"]
        if isinstance(s, ir.Return):
            if s.value is None:
                return [ind + "return;"]
            return [ind + f"return {self.full_expr(s.value)};"]
        if isinstance(s, ir.Empty):
            return [ind + ";"]
        raise TypeError(f"cannot print statement {type(s).__name__}")

    def if_stmt(self, s: ir.If, level: int) -> list[str]:
        ind = INDENT * level
        lines = [ind + f"if ({self.full_expr(s.cond)}) {{"] + self.body(s.then, level)
        rest = s.otherwise
        while isinstance(rest, ir.If):
            lines.append(ind + f"}} else if ({self.full_expr(rest.cond)}) {{")
            lines.extend(self.body(rest.then, level))
            rest = rest.otherwise
        if rest is not None:
            lines.append(ind + "} else {")
            lines.extend(self.body(rest, level))
        return lines + [ind + "}"]

    def full_expr(self, e: ir.Expr) -> str:
        """An expression in statement position (expression statement, condition, return)."""
        return self.expr(e)

    # ------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr, min_prec: int = 0) -> str:
        """The text of ``e``, parenthesized if its precedence is below ``min_prec``."""
        text, prec = self.expr_prec(e)
        if prec < min_prec:
            return f"({text})"
        return text

    def masks_shift(self, shifted: Type) -> bool:
        """Whether the dialect masks the count of a shift of a ``shifted`` value."""
        masks = self.dialect.masks_shift_count
        return masks == "all" or (masks == "scalar" and not isinstance(shifted, VectorType))

    def shift_count(self, shifted: Type, count: ir.Expr) -> str:
        """``count`` modulo the bit width of ``shifted``'s elements (a power of two, so a
        mask, which also views a negative count as unsigned as OpenCL does); a literal
        already in range is printed as it is."""
        elem = shifted.elem if isinstance(shifted, VectorType) else shifted
        if not isinstance(elem, ScalarType):
            raise CodegenError(f"shift of a value of type '{shifted}'")
        bits = elem.bits
        if isinstance(count, ir.IntLit) and 0 <= count.value < bits:
            return self.expr(count, BINARY_PREC["&"] + 1)
        return f"({self.expr(count, BINARY_PREC['&'])} & {bits - 1})"

    def args(self, exprs: Sequence[ir.Expr]) -> str:
        return ", ".join(self.expr(a, PREC_ASSIGN) for a in exprs)

    def expr_prec(self, e: ir.Expr) -> tuple[str, int]:
        """The text of ``e`` and the precedence level of its outermost operator."""
        if isinstance(e, ir.IntLit):
            return self.int_literal(e)
        if isinstance(e, ir.FloatLit):
            return self.float_literal(e)
        if isinstance(e, ir.StringLit):
            return f'"{e.value}"', PREC_PRIMARY
        if isinstance(e, ir.VarRef):
            return self.name(e.name), PREC_PRIMARY
        if isinstance(e, ir.Binary):
            if self.dialect.binary is not None:
                spelled = self.dialect.binary(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            if e.op in ("/", "%") and self.dialect.divide is not None:
                spelled = self.dialect.divide(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            prec = BINARY_PREC[e.op]
            if e.op in _SHIFTS and self.masks_shift(e.type):
                return f"{self.expr(e.lhs, prec)} {e.op} {self.shift_count(e.type, e.rhs)}", prec
            return f"{self.expr(e.lhs, prec)} {e.op} {self.expr(e.rhs, prec + 1)}", prec
        if isinstance(e, ir.Unary):
            return self.unary(e)
        if isinstance(e, ir.Assign):
            if self.dialect.assign is not None:
                spelled = self.dialect.assign(self, e)
                if spelled is not None:
                    return spelled, PREC_ASSIGN
            if isinstance(e.target, ir.Swizzle) and self.dialect.assign_swizzle is not None:
                spelled = self.dialect.assign_swizzle(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            if e.op in ("/=", "%=") and self.dialect.divide is not None:
                spelled = self.dialect.divide(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            target = self.expr(e.target, PREC_UNARY)
            if e.op in ("<<=", ">>=") and self.masks_shift(e.target.type):
                count = self.shift_count(promote(e.target.type), e.value)
                return f"{target} {e.op} {count}", PREC_ASSIGN
            return f"{target} {e.op} {self.expr(e.value, PREC_ASSIGN)}", PREC_ASSIGN
        if isinstance(e, ir.Conditional):
            if self.dialect.conditional is not None:
                spelled = self.dialect.conditional(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            text = (f"{self.expr(e.cond, PREC_COND + 1)} ? {self.expr(e.then, PREC_ASSIGN)}"
                    f" : {self.expr(e.otherwise, PREC_COND)}")
            return text, PREC_COND
        if isinstance(e, ir.Comma):
            return self.args(e.exprs), PREC_COMMA
        if isinstance(e, ir.Cast):
            return self.cast(e)
        if isinstance(e, ir.Call):
            if self.dialect.call is not None:
                spelled = self.dialect.call(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            name = e.name if e.builtin is not None else self.name(e.name)
            return f"{name}({self.args(e.args)})", PREC_POSTFIX
        if isinstance(e, ir.Index):
            return f"{self.expr(e.base, PREC_POSTFIX)}[{self.expr(e.index)}]", PREC_POSTFIX
        if isinstance(e, ir.Member):
            op = "->" if e.arrow else "."
            return f"{self.expr(e.base, PREC_POSTFIX)}{op}{self.name(e.field_name)}", PREC_POSTFIX
        if isinstance(e, ir.Swizzle):
            if self.dialect.swizzle is not None:
                spelled = self.dialect.swizzle(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            return f"{self.expr(e.base, PREC_POSTFIX)}.{e.spelling}", PREC_POSTFIX
        if isinstance(e, ir.VectorLiteral):
            if self.dialect.vector_literal is not None:
                spelled = self.dialect.vector_literal(self, e)
                if spelled is not None:
                    return spelled, PREC_POSTFIX
            return f"({self.type_name(e.type)})({self.args(e.elems)})", PREC_UNARY
        if isinstance(e, ir.InitList):
            return "{" + self.args(e.elems) + "}", PREC_PRIMARY
        if isinstance(e, ir.SizeOf):
            if e.operand is None:
                return f"sizeof({self.type_name(e.operand_type)})", PREC_UNARY
            text, prec = self.expr_prec(e.operand)
            if prec >= PREC_POSTFIX:
                return f"sizeof {text}", PREC_UNARY
            return f"sizeof({text})", PREC_UNARY
        if isinstance(e, ir.VecStep):
            if self.dialect.vec_step is not None:
                spelled = self.dialect.vec_step(self, e)
                if spelled is not None:
                    return spelled, PREC_PRIMARY
            if e.operand is None:
                return f"vec_step({self.type_name(e.operand_type)})", PREC_POSTFIX
            return f"vec_step({self.expr(e.operand)})", PREC_POSTFIX
        raise TypeError(f"cannot print expression {type(e).__name__}")

    def unary(self, e: ir.Unary) -> tuple[str, int]:
        if self.dialect.unary is not None:
            spelled = self.dialect.unary(self, e)
            if spelled is not None:
                return spelled, PREC_POSTFIX
        if e.op in ("p++", "p--"):
            return f"{self.expr(e.operand, PREC_POSTFIX)}{e.op[1:]}", PREC_POSTFIX
        operand = self.expr(e.operand, PREC_UNARY)
        # ``- -x`` would read as ``--x``: keep such operands apart with parentheses
        if e.op[-1] in "+-&" and operand.startswith(e.op[-1]):
            operand = f"({operand})"
        return f"{e.op}{operand}", PREC_UNARY

    def cast(self, e: ir.Cast) -> tuple[str, int]:
        if self.dialect.cast is not None:
            spelled = self.dialect.cast(self, e)
            if spelled is not None:
                return spelled, PREC_POSTFIX
        if e.implicit:
            return self.expr_prec(e.operand)
        return f"({self.type_name(e.type)}){self.expr(e.operand, PREC_UNARY)}", PREC_UNARY

    def int_literal(self, e: ir.IntLit) -> tuple[str, int]:
        if e.text in BUILTIN_CONSTANTS and not self.dialect.constant_names:
            e = replace(e, text=None)
        if e.text is not None and e.text.isidentifier():  # an enumerator
            return self.name(e.text), PREC_PRIMARY
        if e.text is not None:
            return e.text, PREC_PRIMARY
        name = e.type.name if isinstance(e.type, ScalarType) else "int"
        value = e.value
        if name not in _INT_SUFFIX:
            return f"({self.type_name(e.type)}){self._int_digits(value, 'int')}", PREC_UNARY
        text = self._int_digits(value, name)
        return text, PREC_UNARY if text.startswith("-") else PREC_PRIMARY

    @staticmethod
    def _int_digits(value: int, name: str) -> str:
        suffix = _INT_SUFFIX[name]
        if value == _SIGNED_MIN.get(name):
            return f"(-{-value - 1}{suffix} - 1)"  # the positive half does not fit the type
        return f"{value}{suffix}"

    def float_literal(self, e: ir.FloatLit) -> tuple[str, int]:
        if e.text in BUILTIN_CONSTANTS and not self.dialect.constant_names:
            e = replace(e, text=None)
        if e.text is not None:
            return e.text, PREC_PRIMARY
        name = e.type.name if isinstance(e.type, ScalarType) else "double"
        value = e.value
        if math.isnan(value) or math.isinf(value):
            text = self.dialect.nan if math.isnan(value) else self.dialect.infinity
            if name != "float":
                text = f"({self.type_name(e.type)}){text}"
            if value < 0:
                return f"-{text}", PREC_UNARY
            return text, PREC_UNARY if name != "float" else PREC_PRIMARY
        if name == "double":
            text = _as_float_spelling(repr(value))
        else:
            text = _as_float_spelling(float32_repr(value)) + "f"
            if name == "half":
                text = f"({self.type_name(e.type)}){text}"
        return text, PREC_UNARY if text.startswith(("-", "(")) else PREC_PRIMARY
