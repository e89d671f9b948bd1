"""Choices between cheap floating-point values made without a branch.

A compare-and-swap (``if (x > y) { o[i] = y; o[j] = x; } else { o[i] = x; o[j] = y; }``, the
step of a bitonic sort or a sorting network) branches on the data. gcc keeps the branch for
floats (x86 has no conditional move for them), and on random keys half of the branches are
mispredicted: a bitonic step over 1M floats ran in 1.38 ms, 0.51 ms written with bit masks.

So an ``if``/``else`` whose two branches are the same sequence of assignments, to the same
private scalar variables or the same buffer elements in the same order, each of a cheap value
(variables, literals, and ``+``, ``-``, ``*``, casts and negations of them: nothing that
loads, divides or calls), becomes that sequence once, each float value chosen by
``bitselect`` under the mask ``-(uint)c`` of the condition, evaluated once before it. So does
a ``c ? a : b`` of such values on a comparison, but for a minimum or maximum
(``a < b ? a : b``), which gcc makes one instruction. Both branches write the same places in
the same order, so the writes are those of the branch taken; no store is added where the
program had none. ``bitselect`` is lowered as bit operations (``codegen/c_builtins.py``):
the choice costs a few logic operations and no branch. Integer assignments stay ``?:``, which
gcc turns into a conditional move.

Only in a kernel that stores at an address varying per work-item other than by a stride, under
a condition that varies too (a conditional scatter, ``if (ixj > i) ... o[ixj] = ...``): gcc does
not vectorize its work-item loop, which runs one work-item at a time, where the branch is paid.
Other kernels vectorize, an unconditional scatter included (AVX-512 scatters), and gcc's
if-conversion chooses there with one blend per lane group, cheaper than the masks
(BlackScholes' ``d > 0 ? 1 - c : c`` ran 4% slower as a mask).

Pass name: ``selects`` (before ``workgroup``); ``PPCL_DEBUG=plans`` names every choice made
branch-free, and every one left to gcc with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.effects import is_effect_free
from ppcl.compiler.analysis.uniformity import Kind, analyze_kernel
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import DOUBLE, FLOAT, INT, UINT, ULONG, PointerType, ScalarType
from ppcl.compiler.ir.visit import Rewriter, map_child_stmts, walk
from ppcl.compiler.transforms.workgroup import (
    element_address,
    memory_accesses,
    pointer_offsets,
)

__all__ = ["BranchFree", "branch_free", "scattered_store"]

_COMPARISONS = frozenset(("<", ">", "<=", ">=", "==", "!=", "&&", "||"))
_MOST_ASSIGNMENTS = 8


@dataclass(frozen=True)
class BranchFree:
    """The rewritten function and one line per ``if`` made branch-free, for the plans."""

    function: ir.Function
    lines: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        return list(self.lines)


def _cheap(e: ir.Expr) -> bool:
    """A value computed without a load, a division, a call or a side effect."""
    if isinstance(e, ir.IntLit | ir.FloatLit):
        return True
    if isinstance(e, ir.VarRef):
        return isinstance(e.type, ScalarType)
    if isinstance(e, ir.Cast):
        return isinstance(e.type, ScalarType) and _cheap(e.operand)
    if isinstance(e, ir.Unary):
        return e.op in ("-", "+") and _cheap(e.operand)
    if isinstance(e, ir.Binary):
        return e.op in ("+", "-", "*") and _cheap(e.lhs) and _cheap(e.rhs)
    return False


def _assignments(s: ir.Stmt) -> list[ir.Assign] | None:
    """The plain assignments a branch consists of, in order; None for anything else."""
    stmts = s.stmts if isinstance(s, ir.Block) else (s,)
    out: list[ir.Assign] = []
    for st in stmts:
        if not (isinstance(st, ir.ExprStmt) and isinstance(st.expr, ir.Assign)
                and st.expr.op == "="):
            return None
        out.append(st.expr)
    return out


def _target_ok(t: ir.Expr) -> bool:
    """A private scalar variable, or an element of a buffer at an index without effects."""
    if isinstance(t, ir.VarRef):
        return isinstance(t.type, ScalarType)
    return isinstance(t, ir.Index) and isinstance(t.base, ir.VarRef) \
        and isinstance(t.base.type, PointerType) and isinstance(t.type, ScalarType) \
        and is_effect_free(t.index)


class _Conditionals(Rewriter):
    """``c ? a : b`` of a floating-point type, both cheap and ``c`` a comparison or a
    variable, as a ``bitselect`` (``_choose``); a minimum or maximum (``a < b ? a : b``) stays,
    which gcc makes one ``minss`` or ``maxss``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def rewrite_Conditional(self, e: ir.Conditional) -> ir.Expr:
        cond = e.cond
        if e.type not in (FLOAT, DOUBLE) or not _cheap(e.then) or not _cheap(e.otherwise) \
                or not _condition(cond):
            return e
        if isinstance(cond, ir.Binary) and cond.op in ("<", ">", "<=", ">=") and \
                {_bare(cond.lhs), _bare(cond.rhs)} == {_bare(e.then), _bare(e.otherwise)}:
            return e
        self.lines.append(f"branch-free: the ?: at line {e.loc.line} as a bitselect")
        return _choose(_zero_or_one(cond), e.then, e.otherwise)

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        """A scalar float ``select(a, b, c)``: its arguments are values already."""
        if e.builtin not in ("select__float_float_int", "select__double_double_long"):
            return e
        a, b, c = e.args
        self.lines.append(f"branch-free: the select at line {e.loc.line} as a bitselect")
        flag = ir.Binary(INT, "!=", c, ir.IntLit(c.type, 0, loc=e.loc), loc=e.loc)
        return _choose(flag, b, a)


def _condition(cond: ir.Expr) -> bool:
    """An ``int`` condition without effects: a comparison, a negation or a variable."""
    return cond.type == INT and is_effect_free(cond) and (
        isinstance(cond, ir.Binary) and cond.op in _COMPARISONS
        or isinstance(cond, ir.Unary) and cond.op == "!" or isinstance(cond, ir.VarRef))


def _zero_or_one(cond: ir.Expr) -> ir.Expr:
    """``cond`` as 0 or 1: a comparison or negation is; a variable is compared with 0."""
    if isinstance(cond, ir.Binary) and cond.op in _COMPARISONS \
            or isinstance(cond, ir.Unary) and cond.op == "!":
        return cond
    return ir.Binary(INT, "!=", cond, ir.IntLit(INT, 0, loc=cond.loc), loc=cond.loc)


def _bare(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    return e


class _Rewriter:
    def __init__(self, fn: ir.Function):
        self.names = {n.name for n in walk(fn) if isinstance(n, ir.VarDecl | ir.Param)}
        self.lines: list[str] = []

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        """``s`` with its candidate ``if`` statements rewritten, inner ones first."""
        s = map_child_stmts(s, self.stmt)
        return self._if(s) if isinstance(s, ir.If) else s

    def _if(self, s: ir.If) -> ir.Stmt:
        if s.otherwise is None:
            return s
        then, other = _assignments(s.then), _assignments(s.otherwise)
        if not then or other is None or len(then) != len(other) \
                or len(then) > _MOST_ASSIGNMENTS:
            return s
        cond = s.cond
        if not _condition(cond):
            return s
        targets = [a.target for a in then]
        if any(a.target != b.target or not _target_ok(a.target) for a, b in zip(then, other)):
            return s
        written = {t.name for t in targets if isinstance(t, ir.VarRef)}
        floats = False
        for a, b in zip(then, other):
            for value in (a.value, b.value):
                if not _cheap(value) or any(isinstance(n, ir.VarRef) and n.name in written
                                            for n in walk(value)):
                    return s
            floats = floats or a.target.type in (FLOAT, DOUBLE)
        if not floats:
            return s  # integers: gcc makes the branch a conditional move itself
        name = self._fresh("__ppcl_choice")
        flag = ir.VarRef(INT, name, loc=s.loc)
        out: list[ir.Stmt] = [ir.DeclStmt((ir.VarDecl(name, INT, init=_zero_or_one(cond),
                                                      loc=s.loc),),
                                          loc=s.loc)]
        for a, b in zip(then, other):
            out.append(ir.ExprStmt(dataclasses.replace(a, value=_choose(flag, a.value, b.value)),
                                   loc=a.loc))
        stores = sum(1 for t in targets if isinstance(t, ir.Index))
        self.lines.append(f"branch-free: the if at line {s.loc.line} as {len(targets)} "
                          f"choice(s) ({stores} store(s), {len(targets) - stores} variable(s))")
        return ir.Block(tuple(out), loc=s.loc)

    def _fresh(self, base: str) -> str:
        k = 0
        while f"{base}{k}" in self.names:
            k += 1
        self.names.add(f"{base}{k}")
        return f"{base}{k}"


def _choose(flag: ir.Expr, then: ir.Expr, other: ir.Expr) -> ir.Expr:
    """``flag ? then : other`` of ``then``'s type: for floats ``bitselect`` under the mask of
    all ones or zeros ``-flag`` makes (lowered as bit operations: no branch), ``?:`` for
    other types."""
    t = then.type
    loc = then.loc
    if t == FLOAT:
        bits, key, as_key, select_key = UINT, "as_float", "as_float__uint", \
            "bitselect__float_float_float"
    elif t == DOUBLE:
        bits, key, as_key, select_key = ULONG, "as_double", "as_double__ulong", \
            "bitselect__double_double_double"
    else:
        return ir.Conditional(t, flag, then, other, loc=loc)
    ones = ir.Unary(bits, "-", ir.Cast(bits, flag, loc=loc), loc=loc)
    mask = ir.Call(t, key, (ones,), builtin=as_key, loc=loc)
    return ir.Call(t, "bitselect", (other, then, mask), builtin=select_key, loc=loc)


def scattered_store(module: ir.Module, fn: ir.Function) -> int | None:
    """The line of a store of ``fn`` at an address that varies per work-item other than by a
    stride along the local ids (``o[i ^ j]``) and under a condition that varies too (some
    work-items skip it), None when there is none. gcc vectorizes an unconditional scatter
    (AVX-512 has scatter stores), not a conditional one: that work-item loop runs one work-item
    at a time."""
    uni = analyze_kernel(module, fn)
    offsets = pointer_offsets(fn, frozenset(p.name for p in fn.params))
    for s in walk(fn):
        if isinstance(s, ir.ExprStmt) and uni.under_varying_control(s):
            for access in memory_accesses(s.expr):
                if not access.store or not isinstance(access.base.type, PointerType):
                    continue
                address = element_address(access, uni, offsets)
                if address is None or uni.expr(address).kind is Kind.VARYING:
                    return s.loc.line
    return None


def branch_free(module: ir.Module, fn: ir.Function) -> BranchFree:
    """``fn`` with its compare-and-swaps of floating-point values made branch-free, when it
    stores at addresses that vary per work-item (``scattered_store``)."""
    if fn.body is None:
        return BranchFree(fn)
    rewriter = _Rewriter(fn)
    body = rewriter.stmt(fn.body)
    conditionals = _Conditionals()
    body = conditionals.rewrite(body)
    lines = rewriter.lines + conditionals.lines
    if not lines:
        return BranchFree(fn)
    scattered = scattered_store(module, fn)
    if scattered is None:
        return BranchFree(fn, tuple(
            line.replace("branch-free: ", "no branch-free choice: ", 1).split(" as ")[0]
            + " stays: no store scatters under a condition, so the work-item loop vectorizes "
            "and gcc chooses there without a branch" for line in lines))
    assert isinstance(body, ir.Block)
    return BranchFree(dataclasses.replace(fn, body=body), tuple(
        f"{line} (the store at line {scattered} scatters under a condition: the work-item "
        "loop runs one work-item at a time)" for line in lines))
