"""Views: how an index into a pattern value becomes an access to memory (Lift, Section 5).

Data-layout patterns never copy: ``split``, ``join``, ``transpose``, ``slide``, ``pad``,
``reorder``, ``zip``, ``get`` and the vector casts each wrap the view of their argument and
turn an index tuple (outermost first) into the argument's index tuple. Only the innermost
view touches memory: ``Memory`` flattens the indices over its shape into one ``Index`` of the
IR. ``access`` returns an IR expression (an lvalue where the memory is writable) or, for a
tuple value, a tuple of them. The same views serve as output views: a kernel writes the result
of ``join(map(f)(..))`` through ``Split`` over its output, so the write lands where the join
says.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, AddressSpace, PointerType, ScalarType, Type, VectorType
from ppcl.patterns.types import PatternTypeError

Access = ir.Expr | tuple["Access", ...]
INDEX = INT  # index arithmetic (the builder refuses arrays past 2**31 elements)


def lit(value: int) -> ir.Expr:
    return ir.IntLit(INDEX, value)


def binop(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """Index arithmetic, folded where an operand is a literal 0 or 1."""
    if isinstance(a, ir.IntLit) and isinstance(b, ir.IntLit):
        folded = {"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value,
                  "/": a.value // b.value if b.value else None,
                  "%": a.value % b.value if b.value else None}.get(op)
        if folded is not None:
            return lit(folded)
    if op == "*" and (_is_lit(a, 1) or _is_lit(b, 0)):
        return b
    if op == "*" and (_is_lit(b, 1) or _is_lit(a, 0)):
        return a
    if op in ("+", "-") and _is_lit(b, 0):
        return a
    if op == "+" and _is_lit(a, 0):
        return b
    if op == "/" and _is_lit(b, 1):
        return a
    if op == "%" and _is_lit(b, 1):
        return lit(0)
    return ir.Binary(INDEX, op, a, b)


def _is_lit(e: ir.Expr, value: int) -> bool:
    return isinstance(e, ir.IntLit) and e.value == value


class View(abc.ABC):
    contiguous = True  # consecutive innermost indices are consecutive in memory

    @abc.abstractmethod
    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        ...


class _Inherits(View):
    """A view whose elements lie as its ``inner`` view's do: contiguous where that is."""

    inner: View

    @property
    def contiguous(self) -> bool:  # type: ignore[override]
        return self.inner.contiguous


@dataclass(frozen=True)
class Memory(View):
    """An array in memory: ``base`` is a pointer (or array variable), ``shape`` its lengths."""

    base: ir.Expr
    shape: tuple[int, ...]
    elem: ScalarType | VectorType

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        if len(idx) != len(self.shape):
            raise PatternTypeError(f"memory of shape {self.shape} indexed with {len(idx)} "
                                   "indices")
        if not self.shape:
            return self.base
        flat = lit(0)
        for i, length in zip(idx, self.shape, strict=True):
            flat = binop("+", binop("*", flat, lit(length)), i)
        return ir.Index(self.elem, self.base, flat)


@dataclass(frozen=True)
class Tuple(View):
    """A value of tuple type kept as one view per component."""

    parts: tuple[View, ...]

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        return tuple(p.access(idx) for p in self.parts)


@dataclass(frozen=True)
class Indexed(_Inherits):
    """Element ``i`` of ``inner`` (what a map binds its parameter to)."""

    inner: View
    i: ir.Expr

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        return self.inner.access((self.i, *idx))


@dataclass(frozen=True)
class Split(_Inherits):
    n: int
    inner: View

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, j, *rest = idx
        return self.inner.access((binop("+", binop("*", i, lit(self.n)), j), *rest))


@dataclass(frozen=True)
class Join(_Inherits):
    m: int  # length of the inner arrays joined
    inner: View

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, *rest = idx
        return self.inner.access((binop("/", i, lit(self.m)), binop("%", i, lit(self.m)), *rest))


@dataclass(frozen=True)
class Transpose(View):
    inner: View
    contiguous = False

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, j, *rest = idx
        return self.inner.access((j, i, *rest))


@dataclass(frozen=True)
class Slide(_Inherits):
    step: int
    inner: View

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, j, *rest = idx
        return self.inner.access((binop("+", binop("*", i, lit(self.step)), j), *rest))


@dataclass(frozen=True)
class Pad(View):
    """``left`` elements before and some after, each the nearest element (clamp)."""

    left: int
    length: int  # of the unpadded array
    inner: View
    contiguous = False

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, *rest = idx
        k = binop("-", i, lit(self.left))
        if isinstance(k, ir.IntLit):
            clamped: ir.Expr = lit(min(max(k.value, 0), self.length - 1))
        else:
            last = lit(self.length - 1)
            high = ir.Conditional(INDEX, ir.Binary(INT, ">", k, last), last, k)
            clamped = ir.Conditional(INDEX, ir.Binary(INT, "<", k, lit(0)), lit(0), high)
        return self.inner.access((clamped, *rest))


@dataclass(frozen=True)
class Reorder(View):
    stride: int
    length: int
    inner: View
    contiguous = False

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, *rest = idx
        rows = self.length // self.stride
        k = binop("+", binop("*", binop("%", i, lit(self.stride)), lit(rows)),
                  binop("/", i, lit(self.stride)))
        return self.inner.access((k, *rest))


@dataclass(frozen=True)
class Zip(View):
    parts: tuple[View, ...]

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        return tuple(p.access(idx) for p in self.parts)


@dataclass(frozen=True)
class Get(_Inherits):
    index: int
    inner: View

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        whole = self.inner.access(idx)
        assert isinstance(whole, tuple)
        return whole[self.index]


def _address_space(e: ir.Expr) -> AddressSpace:
    base = e
    while isinstance(base, ir.Index | ir.Unary | ir.Cast):
        base = base.base if isinstance(base, ir.Index) else base.operand
    if isinstance(base.type, PointerType):
        return base.type.space
    return AddressSpace.PRIVATE


def _reinterpret(element: ir.Expr, as_type: Type) -> ir.Expr:
    """``*(T *)&element``: the memory at ``element`` read (or written) as ``as_type``."""
    space = _address_space(element)
    address = ir.Unary(PointerType(element.type, space), "&", element)
    return ir.Unary(as_type, "*", ir.Cast(PointerType(as_type, space), address))


@dataclass(frozen=True)
class AsVector(View):
    """Vectors of ``width`` consecutive scalars of a contiguous view."""

    width: int
    inner: View

    def __post_init__(self) -> None:
        if not self.inner.contiguous:
            raise PatternTypeError(f"as_vector({self.width}) of a view whose elements are not "
                                   "consecutive in memory (transposed, padded or reordered)")

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, *rest = idx
        return _map_leaves(self.inner.access((binop("*", i, lit(self.width)), *rest)),
                           lambda e: _reinterpret(e, VectorType(_scalar(e.type), self.width)))


@dataclass(frozen=True)
class AsScalar(View):
    """The components of the vectors of ``inner``, one after another."""

    width: int
    inner: View

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        i, *rest = idx
        vector = self.inner.access((binop("/", i, lit(self.width)), *rest))
        k = binop("%", i, lit(self.width))
        return _map_leaves(vector, lambda e: _component(e, k))


def _component(vector: ir.Expr, k: ir.Expr) -> ir.Expr:
    elem = _scalar(vector.type)
    if isinstance(k, ir.IntLit):
        return ir.Swizzle(elem, vector, (k.value,), f"s{k.value:x}")
    space = _address_space(vector)
    address = ir.Unary(PointerType(vector.type, space), "&", vector)
    return ir.Index(elem, ir.Cast(PointerType(elem, space), address), k)


def _scalar(t: Type) -> ScalarType:
    if isinstance(t, VectorType):
        return t.elem
    assert isinstance(t, ScalarType), t
    return t


def _map_leaves(a: Access, f: object) -> Access:
    if isinstance(a, tuple):
        return tuple(_map_leaves(x, f) for x in a)
    return f(a)  # type: ignore[operator, no-any-return]


@dataclass(frozen=True)
class Scalar(View):
    """A value held in private variables (a scalar, a vector or a tuple of them)."""

    value: Access

    def access(self, idx: tuple[ir.Expr, ...]) -> Access:
        if idx:
            raise PatternTypeError("a scalar value indexed like an array")
        return self.value
