"""Index arithmetic of a generated kernel done in ``int`` where its launch proves it fits.

``int i = get_global_id(1) * w + get_global_id(0);`` computes in ``size_t`` (the ids are
``size_t``, so ``w`` is converted) and then converts to ``int``: a truncation, which the CPU
device must keep, so gcc cannot see that ``i`` grows by one along the work-item loop and
indexes memory with gathers and scatters (a 2-D copy written so runs 4x slower than the same
copy written with ``int x = get_global_id(0)``). Input space splitting's widening
(``transforms/widen.py``) leaves such conversions alone: without the launch's sizes, the value
may not fit in ``int``.

The overlay generates its kernels for one NDRange, with the scalar arguments it specialized
as literals, so it can bound such an expression over the whole range (interval arithmetic
from the ids' bounds). Where every sub-expression's exact value lies in ``int``'s range,
the conversion is exact and the same value is computed in ``int`` arithmetic from ids
converted to ``int``, which the widening then turns into 64-bit consecutive indices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, ScalarType
from ppcl.compiler.ir.visit import Node, Rewriter

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1
_NARROWED_OPS = frozenset(("+", "-", "*"))
_EVALUATED_QUERIES = frozenset(("get_global_id", "get_global_size"))


def _wide_unsigned(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and not t.is_signed and t.size == 8


def _int_like(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and t.is_signed and t.size <= 4


def _interval(e: ir.Expr, global_size: Sequence[int], offset: Sequence[int]
              ) -> tuple[int, int] | None:
    """The least and greatest exact (unbounded) value of ``e`` over the NDRange, for ``e``
    built from integer literals, ``get_global_id``, ``get_global_size`` and + - * with
    conversions between integer types of at least 32 bits; None for anything else."""
    if isinstance(e, ir.IntLit):
        return e.value, e.value
    if isinstance(e, ir.Call):
        dim = const_int(e.args[0]) if e.builtin is not None and len(e.args) == 1 else None
        if dim is None or e.name not in _EVALUATED_QUERIES or not 0 <= dim < 3:
            return None
        size = global_size[dim] if dim < len(global_size) else 1
        if e.name == "get_global_size":
            return size, size
        first = offset[dim] if dim < len(offset) else 0
        return first, first + size - 1
    if isinstance(e, ir.Cast):
        inner = e.operand
        if not (isinstance(inner.type, ScalarType) and inner.type.is_integer
                and inner.type.size >= 4):
            return None
        return _interval(inner, global_size, offset)
    if isinstance(e, ir.Binary) and e.op in _NARROWED_OPS:
        lhs = _interval(e.lhs, global_size, offset)
        rhs = _interval(e.rhs, global_size, offset)
        if lhs is None or rhs is None:
            return None
        if e.op == "+":
            return lhs[0] + rhs[0], lhs[1] + rhs[1]
        if e.op == "-":
            return lhs[0] - rhs[1], lhs[1] - rhs[0]
        products = [a * b for a in lhs for b in rhs]
        return min(products), max(products)
    return None


class _Narrow(Rewriter):
    def __init__(self, global_size: Sequence[int], offset: Sequence[int]) -> None:
        self.global_size = tuple(global_size)
        self.offset = tuple(offset)
        self.count = 0

    def _fits(self, e: ir.Expr) -> bool:
        bounds = _interval(e, self.global_size, self.offset)
        return bounds is not None and _INT_MIN <= bounds[0] and bounds[1] <= _INT_MAX

    def _in_int(self, e: ir.Expr) -> ir.Expr | None:
        """``e`` computed in ``int``, or None when a sub-expression may leave ``int``'s range."""
        if not self._fits(e):
            return None
        if isinstance(e, ir.IntLit):
            return ir.IntLit(INT, e.value, loc=e.loc)
        if isinstance(e, ir.Call):
            return ir.Cast(INT, e, loc=e.loc)
        if isinstance(e, ir.Cast):
            inner = e.operand
            if _int_like(inner.type):
                return inner if inner.type == INT else ir.Cast(INT, inner, loc=e.loc)
            return self._in_int(inner)
        assert isinstance(e, ir.Binary)
        lhs, rhs = self._in_int(e.lhs), self._in_int(e.rhs)
        if lhs is None or rhs is None:
            return None
        return ir.Binary(INT, e.op, lhs, rhs, loc=e.loc)

    def rewrite_Cast(self, e: ir.Cast) -> ir.Expr:
        if not _int_like(e.type) or not _wide_unsigned(e.operand.type) \
                or not isinstance(e.operand, ir.Binary):
            return e
        narrowed = self._in_int(e.operand)
        if narrowed is None:
            return e
        self.count += 1
        return narrowed if e.type == INT else dataclasses.replace(e, operand=narrowed)


def narrow_indices(body: Node, global_size: Sequence[int], offset: Sequence[int]
                   ) -> tuple[Node, int]:
    """``body`` with every conversion to ``int`` of ``size_t`` index arithmetic computed in
    ``int`` where the NDRange bounds every value inside ``int``, and how many were rewritten."""
    narrow = _Narrow(global_size, offset)
    result = narrow.rewrite(body)
    return result, narrow.count
