"""Sized types of pattern expressions: symbolic lengths in normal form, mismatches reported
where the expression is built, user functions written in C or traced from Python."""

from __future__ import annotations

import numpy as np
import pytest

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import FLOAT, INT, VectorType
from ppcl.patterns import dsl as p
from ppcl.patterns import expr as px
from ppcl.patterns import interp
from ppcl.patterns.sizes import Size, size
from ppcl.patterns.types import ArrayT, PatternTypeError, TupleT, array
from ppcl.patterns.userfun import UserFun, exp, where

add = UserFun.trace("add", [FLOAT, FLOAT], FLOAT, lambda a, b: a + b)


def test_sizes_normalize() -> None:
    n = size("N")
    assert (n / 4) * 4 == n
    assert n * 2 - n == n
    assert (n - 3) / 1 + 1 == n - 2
    assert str(n / 4) == "N/4"
    assert (n * size("M")).evaluate({"N": 3, "M": 5}) == 15
    with pytest.raises(ValueError, match="not a whole number"):
        (n / 4).evaluate({"N": 10})
    with pytest.raises(ValueError, match="needs values for N"):
        n.evaluate({})
    with pytest.raises(ValueError, match="not a monomial"):
        n / (n + 1)


def test_split_join_types() -> None:
    x = p.param("x", array(FLOAT, "N"))
    chunks = p.split(4)(x)
    assert chunks.type == ArrayT(ArrayT(FLOAT, Size.of(4)), size("N") / 4)
    assert p.join()(chunks).type == x.type
    assert p.transpose()(p.split(8)(x)).type == array(array(FLOAT, size("N") / 8), 8)
    assert p.slide(3, 1)(x).type.length == size("N") - 2  # type: ignore[union-attr]
    assert p.pad(1, 2)(x).type.length == size("N") + 3  # type: ignore[union-attr]


def test_mismatches_are_reported() -> None:
    x = p.param("x", array(FLOAT, 10))
    y = p.param("y", array(FLOAT, "N"))
    with pytest.raises(PatternTypeError, match="10 is not a multiple of 4"):
        p.split(4)(x)
    with pytest.raises(PatternTypeError, match="zip of arrays of different lengths: 10, N"):
        p.zip(x, y)
    with pytest.raises(PatternTypeError, match="join takes an array"):
        p.join()(p.param("s", FLOAT))
    with pytest.raises(PatternTypeError, match="join \\(of an array of arrays\\)"):
        p.join()(x)
    with pytest.raises(PatternTypeError, match=r"user function 'add' takes \(float, float\), "
                       r"given \(int\)"):
        p.map(add)(p.param("i", array(INT, 4)))
    with pytest.raises(PatternTypeError, match="reduce: the function returns"):
        p.reduce(lambda a, v: p.apply(add, v, v), 0, acc=INT)(x)
    with pytest.raises(PatternTypeError, match="as_vector\\(4\\) of 10 elements"):
        p.as_vector(4)(x)


def test_zip_and_get() -> None:
    x = p.param("x", array(FLOAT, "N"))
    i = p.param("i", array(INT, "N"))
    pairs = p.zip(x, i)
    assert pairs.type == ArrayT(TupleT((FLOAT, INT)), size("N"))
    firsts = p.map(p.get(1))(pairs)
    assert firsts.type == i.type


def test_c_user_function_compiles_and_reports_errors() -> None:
    mad = UserFun.c("mad3", [("a", FLOAT), ("b", FLOAT)], FLOAT, "return a * b + 3.0f;",
                    py=lambda a, b: a * b + 3.0)
    function = mad.c_function((VectorType(FLOAT, 4), FLOAT))
    assert isinstance(function, ir.Function) and function.ret == VectorType(FLOAT, 4)
    with pytest.raises(PatternTypeError, match="does not compile"):
        UserFun.c("bad", [("a", FLOAT)], FLOAT, "return a +;")
    only_c = UserFun.c("twice", [("a", FLOAT)], FLOAT, "return a + a;")
    with pytest.raises(PatternTypeError, match="give py= to run it in the interpreter"):
        interp.evaluate(p.map(only_c)(p.param("x", array(FLOAT, 2))), {"x": [1.0, 2.0]})


def test_traced_function_shares_common_subexpressions() -> None:
    square_twice = UserFun.trace("sq", [FLOAT], FLOAT, lambda v: exp(v * v) + exp(v * v))
    traced = square_twice.traced((FLOAT,))
    calls = [e for _, e in traced.bindings if isinstance(e, ir.Call)]
    assert len(calls) == 1  # exp(v * v) once
    select = UserFun.trace("pos", [FLOAT], FLOAT, lambda v: where(v > 0.0, v, 0.0))
    assert any(isinstance(e, ir.Call) and e.name == "select"
               for _, e in select.traced((VectorType(FLOAT, 4),)).bindings)
    assert select.run(np.array([-1.0, 2.0])).tolist() == [0.0, 2.0]
    with pytest.raises(PatternTypeError, match="no truth value"):
        UserFun.trace("bad", [FLOAT], FLOAT, lambda v: v if v > 0 else -v)


def test_show_renames_parameters() -> None:
    def build() -> px.Expr:
        x = p.param("x", array(FLOAT, "N"))
        return p.map(lambda v: p.apply(add, v, v))(x)
    assert px.show(build()) == px.show(build())
    assert px.show(build()).startswith("map((\\x0. add<float,float>")


def test_errors_point_at_the_line_that_built_the_expression() -> None:
    x = p.param("x", array(FLOAT, 10))
    with pytest.raises(PatternTypeError) as caught:
        p.split(4)(x)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{__file__}:")
    assert ": error: split(4) of an array of 10 elements" in lines[0]
    assert lines[1].strip() == "p.split(4)(x)"
    assert lines[2].strip() == "^"
