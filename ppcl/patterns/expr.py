"""Pattern expressions: parameters, applications of functions, lambdas and the patterns.

An expression is a tree of frozen values. ``Apply(fun, args)`` computes its type from its
arguments' when it is built (``PatternTypeError`` otherwise), so every expression is well typed.
Functions are lambdas (``Lambda``: named parameters, a body), user functions (``UserFun``) and
the patterns: Lift's algorithmic ones (``map``, ``reduce``, ``zip``, ``split``, ``join``,
``iterate``, ``reorder``, ``transpose``, ``slide``, ``pad``) and its OpenCL ones, which are
the same functions with a decision attached: a ``Map`` carries the level of the thread
hierarchy it runs on (``global``, ``workgroup``, ``local``, ``seq``), a ``Reduce`` whether it
is sequential, ``ToLocal``/``ToGlobal``/``ToPrivate`` where a result is kept, ``AsVector`` and
``AsScalar`` the vector width. ``show`` prints an expression with its parameters renamed in
order of appearance, so equal expressions print equally (the exploration cache's key).
"""

from __future__ import annotations

import abc
import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from ppcl.compiler.ir.types import ScalarType, VectorType
from ppcl.patterns.sizes import Size
from ppcl.patterns.types import ArrayT, DataType, PatternTypeError, TupleT, expect_array
from ppcl.patterns.userfun import UserFun

_names = itertools.count()


def fresh(prefix: str = "p") -> str:
    """A parameter name used nowhere else (rewrites never capture)."""
    return f"{prefix}{next(_names)}"


class Expr:
    type: DataType


@dataclass(frozen=True)
class Param(Expr):
    name: str
    type: DataType


@dataclass(frozen=True)
class Value(Expr):
    """A constant (the initial value of a reduction): a scalar, a vector of equal components,
    or an array of them (every element ``value``)."""

    value: float | int
    type: ScalarType | VectorType | ArrayT


@dataclass(frozen=True)
class Apply(Expr):
    fun: Fun
    args: tuple[Expr, ...]
    type: DataType = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", self.fun.out_type(tuple(a.type for a in self.args)))


class Fun(abc.ABC):
    """A function of pattern values."""

    @abc.abstractmethod
    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        ...

    def __call__(self, *args: Expr) -> Apply:
        return Apply(self, args)


def _one(name: str, args: tuple[DataType, ...]) -> DataType:
    if len(args) != 1:
        raise PatternTypeError(f"{name} takes one argument, given {len(args)}")
    return args[0]


@dataclass(frozen=True)
class Lambda(Fun):
    params: tuple[Param, ...]
    body: Expr

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        expected = tuple(p.type for p in self.params)
        if args != expected:
            raise PatternTypeError("a function of (" + ", ".join(str(t) for t in expected)
                                   + ") applied to (" + ", ".join(str(t) for t in args) + ")")
        return self.body.type


@dataclass(frozen=True)
class User(Fun):
    """A user function as a pattern-level function; a single tuple argument is unpacked."""

    fun: UserFun

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        if len(args) == 1 and isinstance(args[0], TupleT) and self.fun.arity > 1:
            args = args[0].elems
        return self.fun.out_type(args)


MAP_LEVELS = ("hl", "seq", "global", "workgroup", "local")


@dataclass(frozen=True)
class Map(Fun):
    f: Fun
    level: str = "hl"
    dim: int = 0

    def __post_init__(self) -> None:
        if self.level not in MAP_LEVELS:
            raise ValueError(f"map level {self.level!r} is not one of {', '.join(MAP_LEVELS)}")

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one(self.name, args), self.name)
        return ArrayT(self.f.out_type((arr.elem,)), arr.length)

    @property
    def name(self) -> str:
        return "map" if self.level == "hl" else f"map_{self.level}"


@dataclass(frozen=True)
class Reduce(Fun):
    """``reduce(f, init)``: an array of one element, the fold of ``f`` from ``init``; ``f``
    must be associative and ``init`` its identity for the reduction rules to hold."""

    f: Fun
    init: Value
    seq: bool = False

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        name = "reduce_seq" if self.seq else "reduce"
        arr = expect_array(_one(name, args), name)
        acc = self.f.out_type((self.init.type, arr.elem))
        if acc != self.init.type:
            raise PatternTypeError(f"{name}: the function returns {acc}, the accumulator is "
                                   f"{self.init.type}")
        return ArrayT(acc, Size.of(1))


@dataclass(frozen=True)
class Split(Fun):
    n: Size

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("split", args), "split")
        length, chunk = arr.length.constant, self.n.constant
        if chunk is not None and chunk <= 0:
            raise PatternTypeError(f"split({self.n}): the chunk must be positive")
        if length is not None and chunk is not None and length % chunk:
            raise PatternTypeError(f"split({chunk}) of an array of {length} elements: "
                                   f"{length} is not a multiple of {chunk}")
        return ArrayT(ArrayT(arr.elem, self.n), arr.length / self.n)


@dataclass(frozen=True)
class Join(Fun):
    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        outer = expect_array(_one("join", args), "join")
        inner = expect_array(outer.elem, "join (of an array of arrays)")
        return ArrayT(inner.elem, outer.length * inner.length)


@dataclass(frozen=True)
class Zip(Fun):
    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        if len(args) < 2:
            raise PatternTypeError(f"zip takes two or more arrays, given {len(args)}")
        arrays = [expect_array(a, "zip") for a in args]
        lengths = {a.length for a in arrays}
        if len(lengths) != 1:
            raise PatternTypeError("zip of arrays of different lengths: "
                                   + ", ".join(str(a.length) for a in arrays))
        return ArrayT(TupleT(tuple(a.elem for a in arrays)), arrays[0].length)


@dataclass(frozen=True)
class Get(Fun):
    index: int

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        t = _one("get", args)
        if not isinstance(t, TupleT) or not 0 <= self.index < len(t.elems):
            raise PatternTypeError(f"get({self.index}) of {t}")
        return t.elems[self.index]


@dataclass(frozen=True)
class Transpose(Fun):
    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        outer = expect_array(_one("transpose", args), "transpose")
        inner = expect_array(outer.elem, "transpose (of an array of arrays)")
        return ArrayT(ArrayT(inner.elem, outer.length), inner.length)


@dataclass(frozen=True)
class Slide(Fun):
    """Overlapping windows of ``size`` elements, ``step`` apart (stencils)."""

    size: int
    step: int

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("slide", args), "slide")
        if self.size <= 0 or self.step <= 0:
            raise PatternTypeError(f"slide({self.size}, {self.step}): both must be positive")
        length = arr.length.constant
        if length is not None and (length < self.size or (length - self.size) % self.step):
            raise PatternTypeError(f"slide({self.size}, {self.step}) of {length} elements "
                                   "does not end on a window")
        return ArrayT(ArrayT(arr.elem, Size.of(self.size)),
                      (arr.length - self.size) / self.step + 1)


@dataclass(frozen=True)
class Pad(Fun):
    """``left`` and ``right`` extra elements, each the nearest element of the array (clamp)."""

    left: int
    right: int

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("pad", args), "pad")
        if self.left < 0 or self.right < 0:
            raise PatternTypeError("pad takes non-negative widths")
        return ArrayT(arr.elem, arr.length + self.left + self.right)


@dataclass(frozen=True)
class Reorder(Fun):
    """A stride permutation: element ``i`` of the result is element
    ``(i % stride) * (N / stride) + i / stride`` of the argument (Lift's reorderStride)."""

    stride: int

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("reorder", args), "reorder")
        length = arr.length.constant
        if self.stride <= 0 or (length is not None and length % self.stride):
            raise PatternTypeError(f"reorder({self.stride}) of {arr.length} elements")
        return arr


@dataclass(frozen=True)
class Iterate(Fun):
    n: int
    f: Fun

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        t = _one("iterate", args)
        for _ in range(self.n):
            t = instantiate(self.f, (t,)).out_type((t,))
        return t


@dataclass(frozen=True)
class ToMemory(Fun):
    """``to_local(f)``, ``to_global(f)``, ``to_private(f)``: ``f``, its result kept there."""

    f: Fun
    space: str  # "local", "global", "private"

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        return self.f.out_type(args)


@dataclass(frozen=True)
class AsVector(Fun):
    width: int

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("as_vector", args), "as_vector")
        if not isinstance(arr.elem, ScalarType):
            raise PatternTypeError(f"as_vector({self.width}) of {arr}: needs scalars")
        length = arr.length.constant
        if length is not None and length % self.width:
            raise PatternTypeError(f"as_vector({self.width}) of {length} elements")
        return ArrayT(VectorType(arr.elem, self.width), arr.length / self.width)


@dataclass(frozen=True)
class AsScalar(Fun):
    """Vectors back to scalars; an array of tuples of vectors of one width gives tuples of
    scalars (each component its own array, as the kernels store tuples)."""

    def out_type(self, args: tuple[DataType, ...]) -> DataType:
        arr = expect_array(_one("as_scalar", args), "as_scalar")
        width = vector_width(arr.elem)
        return ArrayT(_scalarize(arr.elem), arr.length * width)


def vector_width(t: DataType) -> int:
    if isinstance(t, VectorType):
        return t.width
    if isinstance(t, TupleT):
        widths = {vector_width(e) for e in t.elems}
        if len(widths) == 1:
            return widths.pop()
    raise PatternTypeError(f"as_scalar needs vectors (or tuples of vectors of one width), "
                           f"got {t}")


def _scalarize(t: DataType) -> DataType:
    if isinstance(t, VectorType):
        return t.elem
    assert isinstance(t, TupleT)
    return TupleT(tuple(_scalarize(e) for e in t.elems))


# ---------------------------------------------------------------------- rebuilding


def fun_children(f: Fun) -> Iterator[tuple[str, Fun | Expr]]:
    """The functions and expressions inside a function (a lambda's body, a map's function)."""
    for item in dataclasses.fields(f):  # type: ignore[arg-type]
        value = getattr(f, item.name)
        if isinstance(value, Fun | Expr):
            yield item.name, value


def substitute(e: Expr, mapping: dict[str, Expr]) -> Expr:
    """``e`` with parameters replaced (names are unique, so nothing is captured); every
    application is rebuilt, so types follow the new arguments."""
    match e:
        case Param(name):
            return mapping.get(name, e)
        case Apply(fun, args):
            new_args = tuple(substitute(a, mapping) for a in args)
            new_fun = instantiate(substitute_fun(fun, mapping), tuple(a.type for a in new_args))
            return Apply(new_fun, new_args)
    return e


def substitute_fun(f: Fun, mapping: dict[str, Expr]) -> Fun:
    changes: dict[str, object] = {}
    for name, child in fun_children(f):
        new = substitute_fun(child, mapping) if isinstance(child, Fun) \
            else substitute(child, mapping)
        if new is not child:
            changes[name] = new
    return dataclasses.replace(f, **changes) if changes else f  # type: ignore[type-var]


def instantiate(f: Fun, args: tuple[DataType, ...]) -> Fun:
    """``f`` for arguments of these types: a lambda written for other array lengths gets
    parameters of the new types (its body retyped), as each step of an ``iterate`` whose
    function halves its array needs."""
    if isinstance(f, ToMemory):
        return ToMemory(instantiate(f.f, args), f.space)
    if not isinstance(f, Lambda) or tuple(p.type for p in f.params) == args \
            or len(args) != len(f.params):
        return f
    params = tuple(Param(fresh(), t) for t in args)
    body = substitute(f.body, {old.name: new for old, new in zip(f.params, params, strict=True)})
    return Lambda(params, body)


# ---------------------------------------------------------------------- printing


def show(e: Expr | Fun) -> str:
    """The expression in Lift's notation, parameters renamed in order of appearance."""
    names: dict[str, str] = {}

    def name(p: Param) -> str:
        if p.name not in names:
            names[p.name] = f"x{len(names)}"
        return names[p.name]

    def fun(f: Fun) -> str:
        match f:
            case Lambda(params, body):
                return "(\\" + ",".join(name(p) for p in params) + ". " + expr(body) + ")"
            case User(u):
                return f"{u.name}<{','.join(str(p) for p in u.params)}>[{u.body or u.py_key}]"
            case Map(g, _, dim):
                return f"{f.name}{'' if dim == 0 else dim}({fun(g)})"
            case Reduce(g, init, seq):
                return f"{'reduce_seq' if seq else 'reduce'}({fun(g)}, {init.value})"
            case Split(n):
                return f"split({n})"
            case Iterate(n, g):
                return f"iterate({n}, {fun(g)})"
            case ToMemory(g, space):
                return f"to_{space}({fun(g)})"
            case Slide(size, step):
                return f"slide({size},{step})"
            case Pad(left, right):
                return f"pad({left},{right})"
            case Reorder(stride):
                return f"reorder({stride})"
            case AsVector(width):
                return f"as_vector({width})"
            case Get(index):
                return f"get({index})"
            case AsScalar():
                return "as_scalar"
        return type(f).__name__.lower()

    def expr(e: Expr) -> str:
        match e:
            case Param():
                return name(e)
            case Value(value):
                return repr(value)
            case Apply(f, args):
                return fun(f) + "(" + ", ".join(expr(a) for a in args) + ")"
        raise TypeError(e)

    return expr(e) if isinstance(e, Expr) else fun(e)
