"""Derivations: lists of rule applications, as data, and the ones that lower the BLAS kernels
and BlackScholes (Lift, Section 6) for a CPU.

A ``Step`` names a rule (with its parameters) and which match it applies at: the ``at``-th in
pre-order, ``-1`` for the last, or ``ALL`` for every match until none is left. A derivation
prints as text (``str``), which the exploration cache records with each measured variant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ppcl.compiler.ir.types import FLOAT
from ppcl.patterns import dsl as p
from ppcl.patterns import expr as px
from ppcl.patterns import rules as r
from ppcl.patterns.types import array
from ppcl.patterns.userfun import UserFun, exp, log, sqrt, where

ALL = "all"


@dataclass(frozen=True)
class Step:
    rule: r.Rule
    at: int | str = 0

    def __str__(self) -> str:
        return f"{self.rule}@{self.at}"


Derivation = tuple[Step, ...]


def derive(e: px.Expr, steps: Derivation) -> px.Expr:
    """``e`` rewritten by each step in order; a step that does not match is an error."""
    for step in steps:
        if step.at == ALL:
            e = r.rewrite_all(e, step.rule)
            continue
        count = r.positions(e, step.rule)
        assert isinstance(step.at, int)
        at = count + step.at if step.at < 0 else step.at
        if not 0 <= at < count:
            raise ValueError(f"step {step}: the rule matches {count} times in "
                             f"{px.show(e)}")
        e = r.rewrite(e, step.rule, at)
    return e


def show_derivation(steps: Derivation) -> str:
    return ",".join(str(s) for s in steps)


# ---------------------------------------------------------------------- user functions

add = UserFun.trace("add", [FLOAT, FLOAT], FLOAT, lambda a, b: a + b)
mult = UserFun.trace("mult", [FLOAT, FLOAT], FLOAT, lambda a, b: a * b)
absolute = UserFun.trace("abs", [FLOAT], FLOAT, lambda a: abs(a))


def _cnd(d: Any) -> Any:
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937
                                                     + k * (-1.821255978 + k * 1.330274429))))
    c = 0.39894228040143267794 * exp(-0.5 * d * d) * poly
    return where(d > 0.0, 1.0 - c, c)


def _black_scholes(s: Any, x: Any, t: Any, rate: Any, volatility: Any) -> tuple[Any, Any]:
    sqrt_t = sqrt(t)
    d1 = (log(s / x) + (rate + 0.5 * volatility * volatility) * t) \
        / (volatility * sqrt_t)
    d2 = d1 - volatility * sqrt_t
    discounted = x * exp(-rate * t)
    call = s * _cnd(d1) - discounted * _cnd(d2)
    put = discounted * (1.0 - _cnd(d2)) - s * (1.0 - _cnd(d1))
    return call, put


black_scholes_fun = UserFun.trace("black_scholes", [FLOAT] * 5, px.TupleT((FLOAT, FLOAT)),
                                  _black_scholes)


# ---------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Problem:
    """A high-level expression, its inputs, and how to derive a CPU version of it from
    numeric parameters: chunk per work-item, vector width, and the number of interleaved
    accumulators of a sequential reduction (1: one)."""

    name: str
    expr: px.Expr
    inputs: tuple[px.Param, ...]
    derivation: Callable[[int, int, int], Derivation]


def scal() -> Problem:
    x, a = p.param("x", array(FLOAT, "N")), p.param("a", FLOAT)
    e = p.map(lambda v: p.apply(mult, a, v))(x)

    def steps(chunk: int, width: int, interleave: int = 1) -> Derivation:
        vector = (Step(r.Vectorize(width)),) if width > 1 else ()
        return (*vector, Step(r.SplitJoin(chunk)), Step(r.MapToLevel("global")),
                Step(r.MapToLevel("seq"), ALL))
    return Problem("scal", e, (x, a), steps)


def _sum_of(mapped: px.Expr) -> px.Expr:
    return p.reduce(add, 0.0)(mapped)


def _interleaved(interleave: int) -> Derivation:
    """The innermost reduction folded by ``interleave`` accumulators, the split it needs
    pushed under the map that feeds it."""
    if interleave == 1:
        return ()
    return (Step(r.ReduceInterleave(interleave), -1), Step(r.SplitMap(), -1))


def reduction_steps(chunk: int, width: int, interleave: int = 1) -> Derivation:
    vector = (Step(r.Vectorize(width)), Step(r.ReduceVectors())) if width > 1 else ()
    return (*vector, Step(r.PartialReduce(chunk), -1), Step(r.SplitMap()),
            Step(r.MapFusion()), *_interleaved(interleave), Step(r.MapToLevel("global")),
            Step(r.MapToLevel("seq"), ALL), Step(r.ReduceToSeq(), ALL),
            Step(r.ReduceMapFusion(), ALL))


def sequential_steps() -> Derivation:
    """One work-item folding every element: any length, no split (a short array, or the
    elements a tuned derivation's chunks leave over)."""
    return (Step(r.MapToLevel("seq"), ALL), Step(r.ReduceToSeq(), ALL),
            Step(r.ReduceMapFusion(), ALL))


def vector_steps(width: int, interleave: int) -> Derivation:
    """One work-item folding vectors of ``width`` into ``interleave`` accumulators: one
    launch, for an array too short to pay for waking other threads."""
    return (Step(r.Vectorize(width)), Step(r.ReduceVectors()), *_interleaved(interleave),
            Step(r.MapToLevel("seq"), ALL), Step(r.ReduceToSeq(), ALL),
            Step(r.ReduceMapFusion(), ALL))


def asum() -> Problem:
    x = p.param("x", array(FLOAT, "N"))
    return Problem("asum", _sum_of(p.map(absolute)(x)), (x,), reduction_steps)


def dot() -> Problem:
    x, y = p.param("x", array(FLOAT, "N")), p.param("y", array(FLOAT, "N"))
    return Problem("dot", _sum_of(p.map(mult)(p.zip(x, y))), (x, y), reduction_steps)


def gemv() -> Problem:
    """``y = A x`` for an M x N matrix."""
    a = p.param("A", array(array(FLOAT, "N"), "M"))
    x = p.param("x", array(FLOAT, "N"))
    e = p.map(lambda row: _sum_of(p.map(mult)(p.zip(row, x))))(a)

    def steps(chunk: int, width: int, interleave: int = 1) -> Derivation:
        vector = (Step(r.Vectorize(width)), Step(r.ReduceVectors())) if width > 1 else ()
        split = (Step(r.SplitJoin(chunk)),) if chunk > 1 else ()
        return (*vector, *_interleaved(interleave), *split, Step(r.MapToLevel("global")),
                Step(r.MapToLevel("seq"), ALL), Step(r.ReduceToSeq(), ALL),
                Step(r.ReduceMapFusion(), ALL))
    return Problem("gemv", e, (a, x), steps)


def black_scholes() -> Problem:
    s, k, t = (p.param(n, array(FLOAT, "N")) for n in ("spot", "strike", "years"))
    rate, vol = p.param("rate", FLOAT), p.param("volatility", FLOAT)
    e = p.map(lambda o: p.apply(black_scholes_fun, p.get(0)(o), p.get(1)(o), p.get(2)(o),
                                rate, vol))(p.zip(s, k, t))

    def steps(chunk: int, width: int, interleave: int = 1) -> Derivation:
        vector = (Step(r.Vectorize(width)),) if width > 1 else ()
        return (*vector, Step(r.SplitJoin(chunk)), Step(r.MapToLevel("global")),
                Step(r.MapToLevel("seq"), ALL))
    return Problem("black_scholes", e, (s, k, t, rate, vol), steps)


PROBLEMS: dict[str, Callable[[], Problem]] = {
    "scal": scal, "asum": asum, "dot": dot, "gemv": gemv, "black_scholes": black_scholes}
