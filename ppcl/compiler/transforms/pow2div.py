"""Unsigned division and remainder by a power of two held in a variable, as a shift and a mask.

GPU code computes its strides as shifts (``uint d = 1 << (stage - pass);``, a bitonic sort
step, a Walsh transform's butterfly) and then divides by them (``tid / d``, ``tid % d``). The
C compiler sees a division by a variable: one hardware divide per work-item, lane by lane in a
vectorized work-item loop (x86 has no vector integer divide), where pocl's LLVM proves the
divisor a power of two and shifts. A bitonic sort of 2^18 keys ran 2x slower than with the
shift and the mask written by hand.

For an unsigned integer type ``U`` of width ``w`` and a divisor ``d`` that is ``1 << s``:

* ``x / d`` becomes ``x >> s``, and ``x % d`` becomes ``x & (d - 1)``;
* ``d`` is ``1 << s`` itself, or a variable whose only definition is its initializer
  ``1 << s`` (never assigned again, its address never taken), whose count ``s`` reads only
  variables that never change either (parameters never written, such variables), with no
  memory read or call in it: then ``s`` at the division has its value at the definition;
* the literal ``1`` has a type of width ``w`` (converted to ``U`` if it is signed), so the
  shift count is taken modulo ``w`` by both shifts (OpenCL masks shift counts), and
  ``(U)(1 << s)`` is ``2^(s mod w)``, also for ``s mod w == w - 1`` with a signed 1.

Pass name: part of ``normalize`` (option ``divisions``).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.buffers import single_definitions
from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import ScalarType
from ppcl.compiler.ir.visit import Rewriter, walk

_COUNT_NODES = (ir.VarRef, ir.IntLit, ir.Cast, ir.Binary, ir.Unary)
_COUNT_OPS = frozenset(("+", "-", "*", "&", "|", "^", "<<", ">>", "~"))


def _unsigned(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and not t.is_signed


def _shift_count(e: ir.Expr, unsigned: ScalarType) -> ir.Expr | None:
    """``s`` where ``e`` is ``1 << s`` of ``unsigned``'s width (converted to it)."""
    if isinstance(e, ir.Cast) and e.type == unsigned:
        e = e.operand
    t = e.type
    if isinstance(e, ir.Binary) and e.op == "<<" and isinstance(e.lhs, ir.IntLit) \
            and e.lhs.value == 1 and isinstance(t, ScalarType) and t.is_integer \
            and t.size == unsigned.size:
        return e.rhs
    return None


class _Divisions(Rewriter):
    def __init__(self, defs: dict[str, ir.Expr], stable: frozenset[str]) -> None:
        self.defs = defs  # single definitions: name -> initializer
        self.stable = stable  # variables whose value never changes

    def _steady(self, count: ir.Expr) -> bool:
        """Whether ``count`` has the same value wherever a variable defined by it is read."""
        for n in walk(count):
            if not isinstance(n, _COUNT_NODES):
                return False
            if isinstance(n, ir.VarRef) and n.name not in self.stable:
                return False
            if isinstance(n, ir.Binary | ir.Unary) and n.op not in _COUNT_OPS:
                return False
        return True

    def count(self, divisor: ir.Expr, unsigned: ScalarType) -> ir.Expr | None:
        """``s`` when ``divisor`` is ``1 << s`` at the division (see the module docstring)."""
        direct = _shift_count(divisor, unsigned)
        if direct is not None:
            return direct
        if isinstance(divisor, ir.VarRef) and divisor.name in self.defs:
            count = _shift_count(self.defs[divisor.name], unsigned)
            if count is not None and self._steady(count):
                return count
        return None

    def rewrite_Binary(self, e: ir.Binary) -> ir.Expr:
        t = e.type
        if e.op not in ("/", "%") or not _unsigned(t) or e.lhs.type != t or e.rhs.type != t:
            return e
        assert isinstance(t, ScalarType)
        count = self.count(e.rhs, t)
        if count is None:
            return e
        if e.op == "/":
            return ir.Binary(t, ">>", e.lhs, ir.Cast(t, count, True, loc=count.loc), loc=e.loc)
        one = ir.IntLit(t, 1, loc=e.loc)
        return ir.Binary(t, "&", e.lhs, ir.Binary(t, "-", e.rhs, one, loc=e.loc), loc=e.loc)


def power_of_two_divisions(kernel: ir.Function) -> ir.Function:
    """``kernel`` with its unsigned divisions and remainders by powers of two held in
    variables as shifts and masks (see the module docstring)."""
    body = kernel.body
    if body is None or not any(isinstance(n, ir.Binary) and n.op in ("/", "%")
                               for n in walk(body)):
        return kernel
    defs = single_definitions(kernel)
    eff = effects(body, Effects())
    params = {p.name for p in kernel.params}
    locals_ = {d.name for d in walk(body) if isinstance(d, ir.VarDecl)}
    # a name both a parameter and a local could mean another variable at the division
    stable = (params - eff.writes - eff.address_taken - locals_) | (set(defs) - params)
    rewritten = _Divisions(defs, frozenset(stable)).rewrite(body)
    if rewritten is body:
        return kernel
    return dataclasses.replace(kernel, body=rewritten)
