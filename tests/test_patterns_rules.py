"""Every rewrite rule preserves the reference semantics: an expression the rule matches is run
by the interpreter before and after the rewrite on random inputs (hypothesis), with integer
user functions so the comparison is exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppcl.compiler.ir.types import INT
from ppcl.patterns import dsl as p
from ppcl.patterns import expr as px
from ppcl.patterns import interp
from ppcl.patterns import rules as r
from ppcl.patterns.types import PatternTypeError, array
from ppcl.patterns.userfun import UserFun

add = UserFun.trace("add", [INT, INT], INT, lambda a, b: a + b)
mul3 = UserFun.trace("mul3", [INT], INT, lambda a: a * 3 - 1)
neg = UserFun.trace("neg", [INT], INT, lambda a: -a)
mult = UserFun.trace("mult", [INT, INT], INT, lambda a, b: a * b)

N = 24
ints = st.lists(st.integers(-1000, 1000), min_size=N, max_size=N)
x = p.param("x", array(INT, N))
y = p.param("y", array(INT, N))
matrix = p.param("m", array(array(INT, 6), 4))
matrices = st.lists(st.lists(st.integers(-50, 50), min_size=6, max_size=6), min_size=4,
                    max_size=4)


def _plain(value: object) -> object:
    """Interpreter values with numpy vectors as lists, for comparison."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def check(e: px.Expr, rule: r.Rule, env: dict[str, object], at: int = 0) -> px.Expr:
    assert r.positions(e, rule) > at, f"{rule} does not match {px.show(e)}"
    rewritten = r.rewrite(e, rule, at)
    assert rewritten != e
    assert rewritten.type == e.type
    assert _plain(interp.evaluate(rewritten, env)) == _plain(interp.evaluate(e, env))
    return rewritten


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([1, 2, 3, 4, 6, 8, 12, 24]))
def test_split_join(xs: list[int], n: int) -> None:
    check(p.map(mul3)(x), r.SplitJoin(n), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([2, 3, 4]))
def test_split_map(xs: list[int], n: int) -> None:
    check(p.split(n)(p.map(mul3)(x)), r.SplitMap(), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints)
def test_map_fusion(xs: list[int]) -> None:
    check(p.map(neg)(p.map(mul3)(x)), r.MapFusion(), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([1, 2, 4, 8, 24]))
def test_partial_reduce(xs: list[int], n: int) -> None:
    check(p.reduce(add, 0)(x), r.PartialReduce(n), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints)
def test_reduce_map_fusion(xs: list[int]) -> None:
    check(p.reduce_seq(add, 0)(p.map_seq(mul3)(x)), r.ReduceMapFusion(), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([2, 3, 4, 8]))
def test_reduce_interleave(xs: list[int], k: int) -> None:
    check(p.reduce(add, 0)(x), r.ReduceInterleave(k), {"x": xs})
    check(p.reduce_seq(add, 0)(x), r.ReduceInterleave(k), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, st.integers(1, 2))
def test_iterate_split(xs: list[int], m: int) -> None:
    check(p.iterate(3, p.map(mul3))(x), r.IterateSplit(m), {"x": xs})
    check(p.iterate(1, p.map(mul3))(x), r.IterateSplit(1), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([2, 3, 4, 6]))
def test_reduce_reorder(xs: list[int], stride: int) -> None:
    check(p.reduce(add, 0)(x), r.ReduceReorder(stride), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(matrices)
def test_transpose_maps(m: list[list[int]]) -> None:
    check(p.map(p.map(mul3))(matrix), r.TransposeMaps(), {"m": m})


@settings(max_examples=20, deadline=None)
@given(ints, st.sampled_from(["global", "workgroup", "local", "seq"]))
def test_map_to_level(xs: list[int], level: str) -> None:
    check(p.map(mul3)(x), r.MapToLevel(level), {"x": xs})


@settings(max_examples=20, deadline=None)
@given(ints)
def test_reduce_to_seq(xs: list[int]) -> None:
    check(p.reduce(add, 0)(x), r.ReduceToSeq(), {"x": xs})


@settings(max_examples=20, deadline=None)
@given(ints, st.sampled_from(["local", "global", "private"]))
def test_to_memory(xs: list[int], space: str) -> None:
    check(p.map_local(mul3)(x), r.ToMemoryRule(space), {"x": xs})


@settings(max_examples=25, deadline=None)
@given(ints, ints, st.sampled_from([2, 4, 8]))
def test_vectorize(xs: list[int], ys: list[int], width: int) -> None:
    check(p.map(mul3)(x), r.Vectorize(width), {"x": xs})
    check(p.map(mult)(p.zip(x, y)), r.Vectorize(width), {"x": xs, "y": ys})


@settings(max_examples=25, deadline=None)
@given(ints, st.sampled_from([2, 4, 8]))
def test_reduce_vectors(xs: list[int], width: int) -> None:
    e = p.reduce(add, 0)(p.as_scalar()(p.as_vector(width)(x)))
    check(e, r.ReduceVectors(), {"x": xs})


def test_every_rule_has_a_test() -> None:
    tested = {r.SplitJoin, r.SplitMap, r.MapFusion, r.PartialReduce, r.ReduceMapFusion,
              r.ReduceInterleave,
              r.IterateSplit, r.ReduceReorder, r.TransposeMaps, r.MapToLevel, r.ReduceToSeq,
              r.ToMemoryRule, r.Vectorize, r.ReduceVectors}
    assert set(r.ALGORITHMIC) | set(r.OPENCL) == tested


def test_preconditions_refuse() -> None:
    assert r.positions(p.map(mul3)(x), r.SplitJoin(5)) == 0  # 24 is no multiple of 5
    assert r.positions(p.map_seq(mul3)(x), r.SplitJoin(4)) == 0  # only high-level maps
    assert r.positions(p.reduce_seq(add, 0)(x), r.PartialReduce(4)) == 0
    with pytest.raises(ValueError, match="no match number 1"):
        r.rewrite(p.map(mul3)(x), r.MapToLevel("global"), at=1)


def test_rules_print_with_their_parameters() -> None:
    assert str(r.SplitJoin(4)) == "split-join{n=4}"
    assert str(r.MapFusion()) == "map-fusion"


def test_vectorize_keeps_free_scalars_broadcast() -> None:
    a = p.param("a", INT)
    e = p.map(lambda v: p.apply(mult, a, v))(x)
    rewritten = check(e, r.Vectorize(4), {"x": list(range(N)), "a": 3})
    assert "as_vector(4)" in px.show(rewritten)


def test_vectorize_needs_scalar_functions() -> None:
    with pytest.raises(PatternTypeError):
        r.vectorize_fun(px.Map(px.User(mul3)), 4, (array(INT, 4),))
