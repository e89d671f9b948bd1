"""Constant folding of integer constant expressions over typed IR expressions.

Used for array sizes, ``case`` labels, enumerator values and attribute arguments, and to
reduce the integer constant expressions in a program scope initializer to literals. Arithmetic
follows the C rules of the expression's IR type (wrap-around to the type's width, truncating
division); anything that is not an integer constant expression folds to None.
"""

from __future__ import annotations

import math

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.conversions import wrap
from ppcl.compiler.ir.types import INT, EnumType, ScalarType, Type, VectorType
from ppcl.compiler.ir.visit import Rewriter


def _is_integer(t: Type) -> bool:
    return isinstance(t, EnumType) or (isinstance(t, ScalarType) and t.is_integer)


def fold(e: ir.Expr) -> int | None:
    """The value of an integer constant expression, or None."""
    if isinstance(e, ir.IntLit):
        return wrap(e.value, e.type)
    if isinstance(e, (ir.SizeOf, ir.VecStep)):
        return e.value
    if isinstance(e, ir.Cast):
        if not _is_integer(e.type):
            return None
        if isinstance(e.operand, ir.FloatLit):
            value = e.operand.value
            if isinstance(e.type, ScalarType) and e.type.is_bool:
                return int(value != 0)
            if not math.isfinite(value):
                return None
            return wrap(int(value), e.type)
        inner = fold(e.operand)
        return None if inner is None else wrap(inner, e.type)
    if not _is_integer(e.type):
        return None
    if isinstance(e, ir.Unary):
        operand = fold(e.operand)
        if operand is None:
            return None
        if e.op == "-":
            return wrap(-operand, e.type)
        if e.op == "+":
            return wrap(operand, e.type)
        if e.op == "~":
            return wrap(~operand, e.type)
        if e.op == "!":
            return int(not operand)
        return None
    if isinstance(e, ir.Conditional):
        cond = fold(e.cond)
        if cond is None:
            return None
        return fold(e.then if cond else e.otherwise)
    if isinstance(e, ir.Binary):
        return _fold_binary(e)
    return None


def _fold_binary(e: ir.Binary) -> int | None:
    lhs = fold(e.lhs)
    if lhs is None:
        return None
    if e.op == "&&" and not lhs:
        return 0
    if e.op == "||" and lhs:
        return 1
    rhs = fold(e.rhs)
    if rhs is None:
        return None
    op = e.op
    t = e.type
    if op in ("&&", "||"):
        return int(bool(rhs))
    if op in ("<", ">", "<=", ">=", "==", "!="):
        return int({"<": lhs < rhs, ">": lhs > rhs, "<=": lhs <= rhs, ">=": lhs >= rhs,
                    "==": lhs == rhs, "!=": lhs != rhs}[op])
    if op not in _LANE_OPS:
        return None
    if isinstance(t, EnumType):
        t = INT
    if not isinstance(t, ScalarType):
        return None
    return _fold_lane(op, lhs, rhs, t)


def _is_integer_vector(t: Type) -> bool:
    return isinstance(t, VectorType) and t.elem.is_integer


def fold_vector(e: ir.Expr) -> tuple[int, ...] | None:
    """The lanes of an integer vector constant expression (vector literals of constants,
    a constant converted to the vector type, and operators on them lane by lane), or None."""
    t = e.type
    if not isinstance(t, VectorType) or not t.elem.is_integer:
        return None
    elem = t.elem
    if isinstance(e, ir.VectorLiteral):
        lanes: list[int] = []
        for part in e.elems:
            if isinstance(part.type, VectorType):
                inner = fold_vector(part)
                if inner is None:
                    return None
                lanes.extend(inner)
            else:
                value = fold(part)
                if value is None:
                    return None
                lanes.append(value)
        if len(lanes) == 1:
            lanes *= t.width
        return tuple(wrap(v, elem) for v in lanes) if len(lanes) == t.width else None
    if isinstance(e, ir.Cast):
        if _is_integer_vector(e.operand.type):
            inner = fold_vector(e.operand)
            return None if inner is None else tuple(wrap(v, elem) for v in inner)
        value = fold(e.operand)  # a scalar converted to the vector: every lane
        return None if value is None else (wrap(value, elem),) * t.width
    if isinstance(e, ir.Unary) and e.op in ("-", "+", "~"):
        operand = fold_vector(e.operand)
        if operand is None:
            return None
        return tuple(wrap({"-": -v, "+": v, "~": ~v}[e.op], elem) for v in operand)
    if isinstance(e, ir.Binary) and e.op in _LANE_OPS:
        lhs, rhs = fold_vector(e.lhs), fold_vector(e.rhs)
        if lhs is None or rhs is None or len(lhs) != len(rhs):
            return None
        values = [_fold_lane(e.op, a, b, elem) for a, b in zip(lhs, rhs)]
        return None if None in values else tuple(v for v in values if v is not None)
    return None


_LANE_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")


def _fold_lane(op: str, lhs: int, rhs: int, t: ScalarType) -> int | None:
    """An arithmetic operator of integers of type ``t``, a scalar or one lane of a vector;
    None for a zero divisor."""
    if op in ("/", "%"):
        if rhs == 0:
            return None
        quotient = abs(lhs) // abs(rhs) * (1 if (lhs >= 0) == (rhs >= 0) else -1)
        return wrap(quotient if op == "/" else lhs - quotient * rhs, t)
    if op in ("<<", ">>"):
        count = rhs & (t.bits - 1)  # OpenCL C 6.3.j: modulo the element's width
        return wrap(lhs << count if op == "<<" else lhs >> count, t)
    return wrap({"+": lhs + rhs, "-": lhs - rhs, "*": lhs * rhs, "&": lhs & rhs,
                 "|": lhs | rhs, "^": lhs ^ rhs}[op], t)


class _IntegerConstantFolder(Rewriter):
    """Replaces each largest integer constant expression of a tree, scalar or vector, by its
    literal."""

    def rewrite(self, node: object) -> object:
        if (isinstance(node, ir.Expr) and not isinstance(node, ir.IntLit)
                and isinstance(node.type, ScalarType) and node.type.is_integer
                and not node.type.is_bool):
            value = fold(node)
            if value is not None:
                return ir.IntLit(node.type, value, loc=node.loc)
        if isinstance(node, ir.Binary | ir.Unary | ir.Cast) and _is_integer_vector(node.type):
            lanes = fold_vector(node)
            if lanes is not None:
                t = node.type
                assert isinstance(t, VectorType)
                return ir.VectorLiteral(t, tuple(ir.IntLit(t.elem, v, loc=node.loc)
                                                 for v in lanes), loc=node.loc)
        return super().rewrite(node)  # type: ignore[arg-type]


def fold_integer_constants(e: ir.Expr) -> ir.Expr:
    """``e`` with its integer constant expressions as literals. A program scope initializer is
    evaluated before any code runs: C allows only constant expressions there, and the
    backends print it at file scope, where an operation that is lowered to code of its own
    (a division guarded against a zero divisor) cannot stand."""
    folded = _IntegerConstantFolder().rewrite(e)
    assert isinstance(folded, ir.Expr)
    return folded
