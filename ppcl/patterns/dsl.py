"""The Python spelling of patterns: ``map(f)(xs)``, ``reduce(add, 0.0)(xs)``, ``zip(a, b)``...

Each pattern function returns a ``Pat``, a function of expressions; applied, it builds an
``Apply`` (checking types). Where a pattern takes a function, it may be a user function, a
``Pat``, or a Python function from expressions to an expression, which becomes a ``Lambda``
once the element type is known (when the pattern is applied). ``compose(f, g)`` is
``f o g``.
"""

from __future__ import annotations

import linecache
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ppcl.compiler.diagnostics import Diagnostic, Loc, Severity, SourceMap
from ppcl.compiler.ir.types import ScalarType, VectorType
from ppcl.patterns import expr as px
from ppcl.patterns.sizes import Size
from ppcl.patterns.types import ArrayT, DataType, PatternTypeError
from ppcl.patterns.userfun import UserFun

FunLike = px.Fun | UserFun | Callable[..., px.Expr]


_HERE = os.path.dirname(os.path.abspath(__file__))


class LocatedPatternError(PatternTypeError):
    """A type error located at the user's line that built the expression, with the line and
    a caret (the format of every ppcl diagnostic)."""


def _located(error: PatternTypeError) -> PatternTypeError:
    """``error`` located at the innermost frame outside ``ppcl/patterns`` (once)."""
    if isinstance(error, LocatedPatternError):
        return error
    for frame in reversed(traceback.extract_stack()):
        if os.path.dirname(os.path.abspath(frame.filename)) == _HERE:
            continue
        loc = Loc(frame.filename, frame.lineno or 0, (frame.colno or 0) + 1)
        sources = SourceMap()
        sources.add(frame.filename, "".join(linecache.getlines(frame.filename)))
        return LocatedPatternError(Diagnostic(Severity.ERROR, str(error), loc).format(sources))
    return error


def _build(fun: Callable[[], px.Apply]) -> px.Apply:
    try:
        return fun()
    except LocatedPatternError:
        raise
    except PatternTypeError as error:
        raise _located(error) from error


@dataclass(frozen=True)
class Pat:
    """A pattern-level function built in Python; ``make`` gives its ``Fun`` for argument
    types (a Python function argument becomes a lambda over them)."""

    make: Callable[[tuple[DataType, ...]], px.Fun]

    def __call__(self, *args: px.Expr) -> px.Apply:
        for a in args:
            if not isinstance(a, px.Expr):
                raise PatternTypeError(f"a pattern applied to {a!r}, which is not an expression")
        return _build(lambda: px.Apply(self.make(tuple(a.type for a in args)), args))


def to_fun(f: FunLike | Pat, args: tuple[DataType, ...]) -> px.Fun:
    """``f`` as a ``Fun`` taking arguments of these types."""
    if isinstance(f, Pat):
        params = tuple(px.Param(px.fresh(), t) for t in args)
        return px.Lambda(params, px.Apply(f.make(args), params))
    if isinstance(f, px.Fun):
        return f
    if isinstance(f, UserFun):
        return px.User(f)
    if callable(f):
        params = tuple(px.Param(px.fresh(), t) for t in args)
        body = f(*params)
        if not isinstance(body, px.Expr):
            raise PatternTypeError(f"a function given to a pattern returned {body!r}, "
                                   "not a pattern expression")
        return px.Lambda(params, body)
    raise PatternTypeError(f"{f!r} is not a function")


def _elem(args: tuple[DataType, ...], name: str) -> DataType:
    if len(args) != 1 or not isinstance(args[0], ArrayT):
        raise PatternTypeError(f"{name} takes one array, given ("
                               + ", ".join(str(a) for a in args) + ")")
    return args[0].elem


def param(name: str, t: DataType) -> px.Param:
    """An input of the program."""
    return px.Param(name, t)


def _map(level: str) -> Callable[..., Pat]:
    def build(f: FunLike | Pat, dim: int = 0) -> Pat:
        name = "map" if level == "hl" else f"map_{level}"
        return Pat(lambda args: px.Map(to_fun(f, (_elem(args, name),)), level, dim))
    build.__name__ = "map" if level == "hl" else f"map_{level}"
    return build


map = _map("hl")  # noqa: A001 - Lift's name
map_seq = _map("seq")
map_global = _map("global")
map_workgroup = _map("workgroup")
map_local = _map("local")


def _init(init: float | int | px.Value, t: DataType) -> px.Value:
    if isinstance(init, px.Value):
        return init
    if not isinstance(t, ScalarType | VectorType):
        raise PatternTypeError(f"a reduction's initial value {init!r} for {t}: give a Value")
    return px.Value(init, t)


def reduce(f: FunLike | Pat, init: float | int | px.Value,  # noqa: A001
           acc: ScalarType | VectorType | None = None, seq: bool = False) -> Pat:
    """``reduce(add, 0.0)``: the accumulator has the element type unless ``acc`` says."""
    def make(args: tuple[DataType, ...]) -> px.Fun:
        elem = _elem(args, "reduce")
        value = _init(init, acc or elem)
        return px.Reduce(to_fun(f, (value.type, elem)), value, seq)
    return Pat(make)


def reduce_seq(f: FunLike | Pat, init: float | int | px.Value,
               acc: ScalarType | VectorType | None = None) -> Pat:
    return reduce(f, init, acc, seq=True)


def _fixed(fun: px.Fun) -> Pat:
    return Pat(lambda args: fun)


def split(n: int | str | Size) -> Pat:
    return _fixed(px.Split(Size.of(n)))


def join() -> Pat:
    return _fixed(px.Join())


def zip(*arrays: px.Expr) -> px.Apply:  # noqa: A001 - Lift's name
    return _build(lambda: px.Apply(px.Zip(), arrays))


def get(index: int) -> Pat:
    return _fixed(px.Get(index))


def transpose() -> Pat:
    return _fixed(px.Transpose())


def slide(size: int, step: int) -> Pat:
    return _fixed(px.Slide(size, step))


def pad(left: int, right: int) -> Pat:
    return _fixed(px.Pad(left, right))


def reorder(stride: int) -> Pat:
    return _fixed(px.Reorder(stride))


def iterate(n: int, f: FunLike | Pat) -> Pat:
    return Pat(lambda args: px.Iterate(n, to_fun(f, args)))


def _to(space: str) -> Callable[[FunLike | Pat], Pat]:
    def build(f: FunLike | Pat) -> Pat:
        return Pat(lambda args: px.ToMemory(to_fun(f, args), space))
    return build


to_local = _to("local")
to_global = _to("global")
to_private = _to("private")


def as_vector(width: int) -> Pat:
    return _fixed(px.AsVector(width))


def as_scalar() -> Pat:
    return _fixed(px.AsScalar())


def compose(*funs: FunLike | Pat) -> Pat:
    """``compose(f, g, h)`` is ``f o g o h``: ``h`` applied first."""
    if not funs:
        raise PatternTypeError("compose of no function")

    def make(args: tuple[DataType, ...]) -> px.Fun:
        params = tuple(px.Param(px.fresh(), t) for t in args)
        value: px.Expr = px.Apply(to_fun(funs[-1], args), params)
        for f in reversed(funs[:-1]):
            value = px.Apply(to_fun(f, (value.type,)), (value,))
        return px.Lambda(params, value)
    return Pat(make)


def apply(f: FunLike | Pat, *args: Any) -> px.Apply:
    """``f`` applied to expressions."""
    return _build(lambda: px.Apply(to_fun(f, tuple(a.type for a in args)), tuple(args)))


__all__ = ["FunLike", "LocatedPatternError", "Pat", "apply", "as_scalar", "as_vector", "compose", "get", "iterate",
           "join", "map", "map_global", "map_local", "map_seq", "map_workgroup", "pad", "param",
           "reduce", "reduce_seq", "reorder", "slide", "split", "to_fun", "to_global",
           "to_local", "to_private", "transpose", "zip"]
