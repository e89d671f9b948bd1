"""Nodes of the typed, structured IR of OpenCL C.

Every node is a frozen dataclass carrying its source location. Expressions carry their resolved
type; implicit conversions are explicit ``Cast`` nodes with ``implicit=True`` (the OpenCL printer
leaves them out, so printing stays faithful to the source). Variables are referred to by name;
the semantic analysis gives every local variable of a function a unique name, so later passes can
move code without capture problems. Transforms build new trees (see ``ir.visit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppcl.compiler.diagnostics import NO_LOC, Loc
from ppcl.compiler.ir.types import AddressSpace, FunctionType, StructType, Type

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    type: Type
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


@dataclass(frozen=True)
class IntLit(Expr):
    value: int
    text: str | None = None  # original spelling (hex, suffixes) for faithful printing


@dataclass(frozen=True)
class FloatLit(Expr):
    value: float
    text: str | None = None


@dataclass(frozen=True)
class StringLit(Expr):
    """A string literal (only as a ``printf`` format or argument)."""

    value: str  # the spelling between the quotes, escapes kept


@dataclass(frozen=True)
class VarRef(Expr):
    name: str


@dataclass(frozen=True)
class Unary(Expr):
    """op: ``-`` ``+`` ``!`` ``~`` ``*`` (deref) ``&`` (address of) ``++`` ``--`` (prefix)
    ``p++`` ``p--`` (postfix)."""

    op: str
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    """Arithmetic, bitwise, shift, comparison and logical operators (``&&``, ``||``)."""

    op: str
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class Assign(Expr):
    """``=`` or a compound assignment (``+=``, ``<<=``...); ``target`` is an lvalue."""

    op: str
    target: Expr
    value: Expr


@dataclass(frozen=True)
class Conditional(Expr):
    cond: Expr
    then: Expr
    otherwise: Expr


@dataclass(frozen=True)
class Comma(Expr):
    exprs: tuple[Expr, ...]


@dataclass(frozen=True)
class Cast(Expr):
    """A conversion to ``type``. Scalar-to-vector widening is a Cast to the vector type."""

    operand: Expr
    implicit: bool = False


@dataclass(frozen=True)
class Call(Expr):
    """A call of a user function (``builtin`` is None) or of a builtin. For a builtin,
    ``builtin`` is the resolved overload's key (see ``ir.builtins``) and ``args`` are already
    converted to its parameter types."""

    name: str
    args: tuple[Expr, ...]
    builtin: str | None = None


@dataclass(frozen=True)
class Index(Expr):
    """``base[index]`` on a pointer or array."""

    base: Expr
    index: Expr


@dataclass(frozen=True)
class Member(Expr):
    """``base.field`` or ``base->field`` on a struct or union."""

    base: Expr
    field_name: str
    arrow: bool = False


@dataclass(frozen=True)
class Swizzle(Expr):
    """Vector component selection; ``indices`` are component numbers, ``spelling`` is how the
    source wrote it (``xy``, ``s01``, ``lo``...)."""

    base: Expr
    indices: tuple[int, ...]
    spelling: str


@dataclass(frozen=True)
class VectorLiteral(Expr):
    """``(float4)(a, b.xy, c)``: ``elems`` are scalars or vectors whose widths add up to the
    vector width, or a single scalar that is replicated."""

    elems: tuple[Expr, ...]


@dataclass(frozen=True)
class InitList(Expr):
    """A brace initializer for an array, struct or vector; ``type`` is the initialized type."""

    elems: tuple[Expr, ...]


@dataclass(frozen=True)
class SizeOf(Expr):
    """``sizeof(T)`` or ``sizeof expr``; ``value`` is the computed size."""

    operand_type: Type
    value: int
    operand: Expr | None = None


@dataclass(frozen=True)
class VecStep(Expr):
    """``vec_step(T)`` or ``vec_step(expr)``; ``value`` is the component count (4 for 3)."""

    operand_type: Type
    value: int
    operand: Expr | None = None


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class Stmt:
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


@dataclass(frozen=True)
class VarDecl(Stmt):
    """A variable: local (private or ``__local``), parameter or program-scope ``__constant``."""

    name: str
    type: Type
    space: AddressSpace = AddressSpace.PRIVATE
    const: bool = False
    volatile: bool = False
    init: Expr | None = None
    align: int | None = None  # __attribute__((aligned(N)))


@dataclass(frozen=True)
class DeclStmt(Stmt):
    decls: tuple[VarDecl, ...]


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class Block(Stmt):
    stmts: tuple[Stmt, ...]


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    otherwise: Stmt | None = None


@dataclass(frozen=True)
class For(Stmt):
    init: Stmt | None  # a DeclStmt or an ExprStmt
    cond: Expr | None
    step: Expr | None
    body: Stmt
    # ``#pragma unroll N`` written before the loop (0: ``#pragma unroll``, as far as possible)
    unroll: int | None = None


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: Stmt


@dataclass(frozen=True)
class DoWhile(Stmt):
    body: Stmt
    cond: Expr


@dataclass(frozen=True)
class Switch(Stmt):
    expr: Expr
    body: Block


@dataclass(frozen=True)
class Case(Stmt):
    """A ``case`` label inside a switch body; the statements follow it in the block."""

    value: int
    expr: Expr  # the label expression as written


@dataclass(frozen=True)
class Default(Stmt):
    pass


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(frozen=True)
class Empty(Stmt):
    pass


# ---------------------------------------------------------------- top level


@dataclass(frozen=True)
class Param:
    """A function parameter; ``type_name`` is how the source spells its type where a typedef
    names it (``vec_t*`` for ``__global vec_t *p``), what ``clGetKernelArgInfo`` reports,
    and empty where the type's own spelling says it."""

    name: str
    type: Type
    const: bool = False
    volatile: bool = False
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)
    type_name: str = field(default="", compare=False, kw_only=True)


@dataclass(frozen=True)
class KernelAttrs:
    reqd_work_group_size: tuple[int, int, int] | None = None
    work_group_size_hint: tuple[int, int, int] | None = None
    vec_type_hint: Type | None = None


@dataclass(frozen=True)
class Function:
    name: str
    ret: Type
    params: tuple[Param, ...]
    body: Block | None  # None for a prototype
    is_kernel: bool = False
    attrs: KernelAttrs = KernelAttrs()
    inline: bool = False
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)

    @property
    def type(self) -> FunctionType:
        return FunctionType(self.ret, tuple(p.type for p in self.params))


@dataclass(frozen=True)
class TypeDef:
    """A ``typedef``, kept so printed programs read like the source."""

    name: str
    type: Type
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


@dataclass(frozen=True)
class RecordDef:
    """A struct/union definition at program scope."""

    type: StructType
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


@dataclass(frozen=True)
class EnumDef:
    type: Type  # an EnumType
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


@dataclass(frozen=True)
class GlobalVar:
    """A program-scope variable (``__constant`` in OpenCL C 1.2)."""

    decl: VarDecl
    loc: Loc = field(default=NO_LOC, compare=False, kw_only=True)


TopLevel = Function | TypeDef | RecordDef | EnumDef | GlobalVar


@dataclass(frozen=True)
class Module:
    """A translation unit, declarations in source order."""

    decls: tuple[TopLevel, ...]
    extensions: tuple[tuple[str, bool], ...] = ()  # from #pragma OPENCL EXTENSION
    # #pragma OPENCL FP_CONTRACT: whether a * b + c may round once (on unless the program
    # turns it off)
    fp_contract: bool = True

    @property
    def functions(self) -> tuple[Function, ...]:
        return tuple(d for d in self.decls if isinstance(d, Function) and d.body is not None)

    @property
    def kernels(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.is_kernel)

    def function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def with_only_kernel(self, function: Function) -> Module:
        """The declarations (helpers, types) with ``function`` as the one kernel: how the
        optimizers build a program around a kernel they generated."""
        decls = tuple(d for d in self.decls if not (isinstance(d, Function) and d.is_kernel))
        return Module(decls + (function,), self.extensions)
