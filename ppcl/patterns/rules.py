"""Rewrite rules as data (Lift, Section 4): each a frozen object with a precondition
(``matches``) and a rewrite (``apply``) of one application, with its numeric parameters as
fields, so a derivation is a list of rules and positions that can be printed and replayed.

Algorithmic rules change how a computation is decomposed: split-join, partial reduction,
fusion of maps and of a reduction with a map, splitting of iterations, reordering of a
commutative reduction, transposition around nested maps. OpenCL rules decide how it runs:
which level of the thread hierarchy a map runs on, sequential reductions, the memory a result
is kept in, vector widths. Each rule preserves the reference semantics (``interp``), which the
property tests check on random inputs.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ppcl.compiler.ir.types import ScalarType, VectorType
from ppcl.patterns import expr as px
from ppcl.patterns.sizes import Size
from ppcl.patterns.types import ArrayT, DataType, PatternTypeError, TupleT


class Rule(abc.ABC):
    """A rewrite of one application ``e``; ``apply`` is only called where ``matches``."""

    name = "rule"

    @abc.abstractmethod
    def matches(self, e: px.Apply) -> bool:
        ...

    @abc.abstractmethod
    def apply(self, e: px.Apply) -> px.Expr:
        ...

    def __str__(self) -> str:
        fields = ",".join(f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self))  # type: ignore[arg-type]
        return f"{self.name}{{{fields}}}" if fields else self.name


def _arg(e: px.Apply) -> px.Expr:
    return e.args[0]


def _is(e: px.Expr, kind: type, **fields: object) -> bool:
    if not isinstance(e, px.Apply) or not isinstance(e.fun, kind):
        return False
    return all(getattr(e.fun, k) == v for k, v in fields.items())


def _divides(n: int, length: Size) -> bool:
    value = length.constant
    return value is None or (n > 0 and value % n == 0)


def _length(e: px.Expr) -> Size:
    assert isinstance(e.type, ArrayT)
    return e.type.length


def eta(f: px.Fun, arg: DataType) -> px.Fun:
    """``\\x. f(x)`` for a pattern ``f``, so that every pattern is applied where rules
    look for it (a user function or lambda stays as it is)."""
    if isinstance(f, px.Lambda | px.User):
        return f
    p = px.Param(px.fresh(), arg)
    return px.Lambda((p,), px.Apply(f, (p,)))


def beta(f: px.Fun, args: tuple[px.Expr, ...]) -> px.Expr:
    """``f(args)``, with a lambda's body instantiated rather than applied."""
    if isinstance(f, px.Lambda):
        return px.substitute(f.body, {p.name: a for p, a in zip(f.params, args, strict=True)})
    return px.Apply(f, args)


def compose_funs(f: px.Fun, g: px.Fun, arg: DataType) -> px.Lambda:
    """``f o g`` as a lambda over ``arg`` (lambdas instantiated)."""
    p = px.Param(px.fresh(), arg)
    return px.Lambda((p,), beta(f, (beta(g, (p,)),)))


# ---------------------------------------------------------------------- algorithmic


@dataclass(frozen=True)
class SplitJoin(Rule):
    """``map(f) -> join o map(map(f)) o split(n)``."""

    n: int
    name = "split-join"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Map, level="hl") and _divides(self.n, _length(_arg(e)))

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Map)
        chunks = px.Apply(px.Split(Size.of(self.n)), e.args)
        return px.Apply(px.Join(), (px.Apply(px.Map(eta(px.Map(e.fun.f), _elem(chunks))),
                                             (chunks,)),))


@dataclass(frozen=True)
class SplitMap(Rule):
    """``split(n) o map(f) -> map(map(f)) o split(n)`` (a map commutes with a split)."""

    name = "split-map"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Split) and _is(_arg(e), px.Map)

    def apply(self, e: px.Apply) -> px.Expr:
        inner = _arg(e)
        assert isinstance(inner, px.Apply) and isinstance(inner.fun, px.Map)
        chunks = px.Apply(e.fun, inner.args)
        row = eta(px.Map(inner.fun.f, inner.fun.level), _elem(chunks))
        return px.Apply(px.Map(row, inner.fun.level), (chunks,))


@dataclass(frozen=True)
class MapFusion(Rule):
    """``map(f) o map(g) -> map(f o g)`` (both at one level)."""

    name = "map-fusion"

    def matches(self, e: px.Apply) -> bool:
        return (isinstance(e.fun, px.Map) and _is(_arg(e), px.Map)
                and _arg(e).fun.level == e.fun.level)  # type: ignore[attr-defined]

    def apply(self, e: px.Apply) -> px.Expr:
        inner = _arg(e)
        assert isinstance(e.fun, px.Map) and isinstance(inner, px.Apply)
        assert isinstance(inner.fun, px.Map)
        elem = _elem(inner.args[0])
        return px.Apply(px.Map(compose_funs(e.fun.f, inner.fun.f, elem), e.fun.level),
                        inner.args)


def _elem(e: px.Expr) -> DataType:
    assert isinstance(e.type, ArrayT)
    return e.type.elem


@dataclass(frozen=True)
class PartialReduce(Rule):
    """``reduce(f, z) -> reduce(f, z) o join o map(reduce(f, z)) o split(n)`` (``f``
    associative with identity ``z``)."""

    n: int
    name = "partial-reduce"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Reduce, seq=False) and _divides(self.n, _length(_arg(e)))

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Reduce)
        chunks = px.Apply(px.Split(Size.of(self.n)), e.args)
        partial = px.Apply(px.Map(eta(e.fun, _elem(chunks))), (chunks,))
        return px.Apply(e.fun, (px.Apply(px.Join(), (partial,)),))


@dataclass(frozen=True)
class ReduceMapFusion(Rule):
    """``reduce_seq(f, z) o map(g) -> reduce_seq(\\a x. f(a, g(x)), z)``: the sequential
    fold consumes each mapped element as it is made."""

    name = "reduce-map-fusion"

    def matches(self, e: px.Apply) -> bool:
        return (_is(e, px.Reduce, seq=True) and _is(_arg(e), px.Map)
                and _arg(e).fun.level in ("hl", "seq"))  # type: ignore[attr-defined]

    def apply(self, e: px.Apply) -> px.Expr:
        inner = _arg(e)
        assert isinstance(e.fun, px.Reduce) and isinstance(inner, px.Apply)
        assert isinstance(inner.fun, px.Map)
        acc = px.Param(px.fresh(), e.fun.init.type)
        x = px.Param(px.fresh(), _elem(inner.args[0]))
        body = beta(e.fun.f, (acc, beta(inner.fun.f, (x,))))
        return px.Apply(px.Reduce(px.Lambda((acc, x), body), e.fun.init, True), inner.args)


@dataclass(frozen=True)
class ReduceInterleave(Rule):
    """``reduce(f, z) -> reduce(f, z) o join o reduce_seq(\\acc c. map_seq(f)(zip(acc, c)),
    [z]*k) o split(k)``: ``k`` accumulators, each folding every ``k``-th element, so the
    folds are independent chains (``f`` a user function, associative and commutative)."""

    k: int
    name = "reduce-interleave"

    def matches(self, e: px.Apply) -> bool:
        return (_is(e, px.Reduce) and isinstance(e.fun.f, px.User)  # type: ignore[attr-defined]
                and self.k > 1 and _divides(self.k, _length(_arg(e)))
                and isinstance(e.fun.init.type, ScalarType | VectorType))  # type: ignore[attr-defined]

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Reduce)
        chunks = px.Apply(px.Split(Size.of(self.k)), e.args)
        init = px.Value(e.fun.init.value, ArrayT(e.fun.init.type, Size.of(self.k)))
        acc = px.Param(px.fresh(), init.type)
        chunk = px.Param(px.fresh(), _elem(chunks))
        step = px.Lambda((acc, chunk), px.Apply(px.Map(e.fun.f, "seq"),
                                                (px.Apply(px.Zip(), (acc, chunk)),)))
        partial = px.Apply(px.Reduce(step, init, True), (chunks,))
        return px.Apply(e.fun, (px.Apply(px.Join(), (partial,)),))


@dataclass(frozen=True)
class IterateSplit(Rule):
    """``iterate(n, f) -> iterate(n - m, f) o iterate(m, f)``; ``iterate(1, f) -> f``."""

    m: int
    name = "iterate-split"

    def matches(self, e: px.Apply) -> bool:
        if not _is(e, px.Iterate):
            return False
        n = e.fun.n  # type: ignore[attr-defined]
        return 0 < self.m < n or self.m == n == 1

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Iterate)
        first: px.Expr = px.Apply(px.Iterate(self.m, e.fun.f), e.args) if self.m > 1 \
            else px.Apply(e.fun.f, e.args)
        rest = e.fun.n - self.m
        if rest == 0:
            return first
        return px.Apply(px.Iterate(rest, e.fun.f) if rest > 1 else e.fun.f, (first,))


@dataclass(frozen=True)
class ReduceReorder(Rule):
    """``reduce(f, z) -> reduce(f, z) o reorder(s)`` (``f`` commutative as well)."""

    stride: int
    name = "reduce-reorder"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Reduce, seq=False) and _divides(self.stride, _length(_arg(e)))

    def apply(self, e: px.Apply) -> px.Expr:
        return px.Apply(e.fun, (px.Apply(px.Reorder(self.stride), e.args),))


@dataclass(frozen=True)
class TransposeMaps(Rule):
    """``map(map(f)) -> transpose o map(map(f)) o transpose``."""

    name = "transpose-maps"

    def matches(self, e: px.Apply) -> bool:
        if not _is(e, px.Map, level="hl"):
            return False
        f = e.fun.f  # type: ignore[attr-defined]
        return (isinstance(f, px.Lambda) and len(f.params) == 1
                and _is(f.body, px.Map, level="hl") and f.body.args == f.params)  # type: ignore[attr-defined]

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Map) and isinstance(e.fun.f, px.Lambda)
        inner = e.fun.f.body
        assert isinstance(inner, px.Apply)
        flipped = px.Apply(px.Transpose(), e.args)
        column = px.Param(px.fresh(), _elem(flipped))
        f = px.Lambda((column,), px.Apply(inner.fun, (column,)))
        return px.Apply(px.Transpose(), (px.Apply(px.Map(f), (flipped,)),))


# ---------------------------------------------------------------------- OpenCL


@dataclass(frozen=True)
class MapToLevel(Rule):
    """``map(f) -> map_<level>(f)``: global, workgroup, local or seq."""

    level: str
    name = "map-level"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Map, level="hl")

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Map)
        return px.Apply(dataclasses.replace(e.fun, level=self.level), e.args)


@dataclass(frozen=True)
class ReduceToSeq(Rule):
    """``reduce(f, z) -> reduce_seq(f, z)``."""

    name = "reduce-seq"

    def matches(self, e: px.Apply) -> bool:
        return _is(e, px.Reduce, seq=False)

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Reduce)
        return px.Apply(dataclasses.replace(e.fun, seq=True), e.args)


@dataclass(frozen=True)
class ToMemoryRule(Rule):
    """``map_local(f) -> to_local(map_local(f))`` (or global, private): where the result is
    kept."""

    space: str
    name = "to-memory"

    def matches(self, e: px.Apply) -> bool:
        return isinstance(e.fun, px.Map) and e.fun.level != "hl"

    def apply(self, e: px.Apply) -> px.Expr:
        return px.Apply(px.ToMemory(e.fun, self.space), e.args)


def scalar_level(f: px.Fun) -> bool:
    """A function of scalars alone: user functions, gets and lambdas over them."""
    match f:
        case px.User():
            return True
        case px.Get():
            return True
        case px.Lambda(params, body):
            return (all(isinstance(p.type, ScalarType | TupleT) for p in params)
                    and _scalar_body(body))
    return False


def _scalar_body(e: px.Expr) -> bool:
    if isinstance(e, px.Param | px.Value):
        return True
    assert isinstance(e, px.Apply)
    return scalar_level(e.fun) and all(_scalar_body(a) for a in e.args)


def vectorize_fun(f: px.Fun, width: int, args: tuple[DataType, ...]) -> px.Fun:
    """A scalar-level function over ``width``-wide vectors of its argument types."""
    match f:
        case px.User():
            return f  # user functions take vectors of their scalar types as they are
        case px.Get():
            return f
        case px.Lambda(params, body):
            new = tuple(px.Param(px.fresh(), t) for t in args)
            mapping: dict[str, px.Expr] = {p.name: n for p, n in zip(params, new, strict=True)}
            return px.Lambda(new, _vectorize_body(body, width, mapping))
    raise PatternTypeError(f"cannot vectorize {px.show(f)}")


def _vectorize_body(e: px.Expr, width: int, mapping: dict[str, px.Expr]) -> px.Expr:
    match e:
        case px.Param(name):
            return mapping.get(name, e)  # a free scalar stays one (broadcast)
        case px.Value(value, t):
            return px.Value(value, VectorType(t, width) if isinstance(t, ScalarType) else t)
        case px.Apply(fun, args):
            new_args = tuple(_vectorize_body(a, width, mapping) for a in args)
            return px.Apply(vectorize_fun(fun, width, tuple(a.type for a in new_args)), new_args)
    raise TypeError(e)


def _widen(t: DataType, width: int) -> DataType:
    if isinstance(t, ScalarType):
        return VectorType(t, width)
    if isinstance(t, TupleT):
        return TupleT(tuple(_widen(e, width) for e in t.elems))
    raise PatternTypeError(f"cannot vectorize {t}")


@dataclass(frozen=True)
class Vectorize(Rule):
    """``map(f) -> as_scalar o map(vec(f)) o as_vector(w)`` for a scalar-level ``f`` over an
    array of scalars, or over a zip of such arrays (each vectorized)."""

    width: int
    name = "vectorize"

    def matches(self, e: px.Apply) -> bool:
        if not isinstance(e.fun, px.Map) or not scalar_level(e.fun.f):
            return False
        arg = _arg(e)
        arrays = arg.args if _is(arg, px.Zip) else (arg,)  # type: ignore[attr-defined]
        return all(isinstance(a.type, ArrayT) and isinstance(a.type.elem, ScalarType)
                   and _divides(self.width, a.type.length) for a in arrays)

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Map)
        arg = _arg(e)
        if _is(arg, px.Zip):
            assert isinstance(arg, px.Apply)
            vector_arg: px.Expr = px.Apply(px.Zip(), tuple(
                px.Apply(px.AsVector(self.width), (a,)) for a in arg.args))
        else:
            vector_arg = px.Apply(px.AsVector(self.width), (arg,))
        elem = _widen(_elem(arg), self.width)
        mapped = px.Apply(px.Map(vectorize_fun(e.fun.f, self.width, (elem,)), e.fun.level,
                                 e.fun.dim), (vector_arg,))
        return px.Apply(px.AsScalar(), (mapped,))


@dataclass(frozen=True)
class ReduceVectors(Rule):
    """``reduce(f, z) o as_scalar -> reduce(f, z) o as_scalar o reduce(vec(f), vec(z))``:
    vectors are summed as vectors first (``f`` associative and commutative, a user
    function)."""

    name = "reduce-vectors"

    def matches(self, e: px.Apply) -> bool:
        return (_is(e, px.Reduce) and isinstance(e.fun.f, px.User)  # type: ignore[attr-defined]
                and _is(_arg(e), px.AsScalar) and isinstance(_elem(_arg(e).args[0]), VectorType))  # type: ignore[attr-defined]

    def apply(self, e: px.Apply) -> px.Expr:
        assert isinstance(e.fun, px.Reduce)
        vectors = _arg(e).args[0]  # type: ignore[attr-defined]
        vt = _elem(vectors)
        assert isinstance(vt, VectorType)
        init = px.Value(e.fun.init.value, vt)
        f = vectorize_fun(e.fun.f, vt.width, (vt, vt))
        partial = px.Apply(px.Reduce(f, init, e.fun.seq), (vectors,))
        return px.Apply(e.fun, (px.Apply(px.AsScalar(), (partial,)),))


ALGORITHMIC: tuple[type[Rule], ...] = (SplitJoin, SplitMap, MapFusion, PartialReduce,
                                       ReduceMapFusion, ReduceInterleave, IterateSplit,
                                       ReduceReorder, TransposeMaps)
OPENCL: tuple[type[Rule], ...] = (MapToLevel, ReduceToSeq, ToMemoryRule, Vectorize,
                                  ReduceVectors)


# ---------------------------------------------------------------------- positions


def count(e: px.Expr, predicate: Callable[[px.Apply], bool]) -> int:
    """How many applications in ``e`` (lambda bodies included) satisfy ``predicate``."""
    found = 0

    def walk_expr(x: px.Expr) -> None:
        nonlocal found
        if not isinstance(x, px.Apply):
            return
        if predicate(x):
            found += 1
        walk_fun(x.fun)
        for a in x.args:
            walk_expr(a)

    def walk_fun(f: px.Fun) -> None:
        for _, child in px.fun_children(f):
            if isinstance(child, px.Fun):
                walk_fun(child)
            else:
                walk_expr(child)

    walk_expr(e)
    return found


def positions(e: px.Expr, rule: Rule) -> int:
    """How many applications in ``e`` the rule matches."""
    return count(e, rule.matches)


def is_lowered(e: px.Expr) -> bool:
    """Whether every map has a level and every reduction is sequential (ready for codegen)."""
    return count(e, lambda a: (isinstance(a.fun, px.Map) and a.fun.level == "hl")
                 or (isinstance(a.fun, px.Reduce) and not a.fun.seq)) == 0


def rewrite(e: px.Expr, rule: Rule, at: int = 0) -> px.Expr:
    """``e`` with the rule applied at its ``at``-th match (in pre-order)."""
    counter = [at]

    def on_expr(x: px.Expr) -> px.Expr:
        if not isinstance(x, px.Apply):
            return x
        if rule.matches(x):
            if counter[0] == 0:
                counter[0] = -1
                return rule.apply(x)
            counter[0] -= 1
        fun = on_fun(x.fun)
        args = tuple(on_expr(a) for a in x.args)
        if fun is x.fun and all(a is b for a, b in zip(args, x.args, strict=True)):
            return x
        return px.Apply(fun, args)

    def on_fun(f: px.Fun) -> px.Fun:
        changes: dict[str, object] = {}
        for name, child in px.fun_children(f):
            new = on_fun(child) if isinstance(child, px.Fun) else on_expr(child)
            if new is not child:
                changes[name] = new
        return dataclasses.replace(f, **changes) if changes else f  # type: ignore[type-var]

    result = on_expr(e)
    if counter[0] != -1:
        raise ValueError(f"rule {rule} has no match number {at} in the expression")
    return result


def rewrite_all(e: px.Expr, rule: Rule) -> px.Expr:
    """The rule applied at every match, outermost first, until none is left (for rules
    that cannot apply to their own result)."""
    for _ in range(1000):
        if positions(e, rule) == 0:
            return e
        e = rewrite(e, rule)
    raise RuntimeError(f"rule {rule} keeps matching")
