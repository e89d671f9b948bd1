"""Zero runs: blocks of lanes whose guard reads zero at unit stride, skipped at once.

A work-item loop whose body first leaves where a flag of the lane is zero,

    int tid = get_global_id(0);
    if (tid >= n || !mask[tid]) next_workitem;
    ... (a loop over the lane's edges)

runs its lanes one after another, a load, a compare and a branch each, also where the flags
are zero for long runs: a breadth-first search reads its frontier flags over the whole graph at
every level, and most levels hold a few nodes. When the flag ``mask[tid]`` sits at unit stride
along x, the printer tests a block of ``SKIP_LANES`` lanes at once: where the guard's
comparisons before the load (``tid >= n``: affine in x, so false over the block when false at
its first and last lane) are false at both ends and the block's flags are all zero bits (zero
for every integer, and ``0.0`` or ``-0.0`` would only not be skipped), no lane of the block runs,
and the block is skipped; other blocks run their lanes as before, a loop gcc may still
vectorize. The loads the test makes are those the block's lanes make themselves.

The plan is decided after input space splitting, so that a split's fast copy, whose guard no
longer holds the comparisons decided on its range, gets its own (``SkipPlan`` on the work-item
loop, ``PPCL_DEBUG=plans`` says which loop skips and on which load).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.affine import Model, affine_of, constraint_of, model_of
from ppcl.compiler.analysis.effects import unwritten_int_params
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import AddressSpace, PointerType, ScalarType
from ppcl.compiler.ir.visit import Rewriter
from ppcl.compiler.transforms.split import _is_exit, _quiet_decl, _strip, _terms
from ppcl.compiler.transforms.workgroup import FormedKernel

SKIP_LANES = 64  # lanes a block test covers: 64 flag bytes, a cache line, one AVX-512 load
_ORDERINGS = ("<", "<=", ">", ">=")
_OTHER_PLAN = "the loop runs masked, jammed, strided, as rows or one lane wide"
_NO_GUARD = "the body does not begin with a guard that ends the lane"
_NO_ZERO_TEST = "no guard tests a load for zero"
_UNGUARDED = (_OTHER_PLAN, _NO_GUARD, _NO_ZERO_TEST)  # not said for every loop


def _zero_test(term: ir.Expr) -> ir.Expr | None:
    """The operand ``term`` compares with zero (``!a``, ``a == 0``, ``0 == a``), or None."""
    term = _strip(term)
    if isinstance(term, ir.Unary) and term.op == "!":
        return _strip(term.operand)
    if isinstance(term, ir.Binary) and term.op == "==":
        for value, other in ((term.lhs, term.rhs), (term.rhs, term.lhs)):
            other = _strip(other)
            if isinstance(other, ir.IntLit) and other.value == 0:
                return _strip(value)
    return None


def _unit_stride_load(e: ir.Expr, model: Model) -> ir.Index | str:
    """``e`` as a load of a scalar element at unit stride along x from a global or constant
    buffer, or why it is not one."""
    if not isinstance(e, ir.Index) or not isinstance(e.base, ir.VarRef):
        return "the guard's test is not a load of a buffer element"
    pointer = e.base.type
    if not isinstance(pointer, PointerType) \
            or pointer.space not in (AddressSpace.GLOBAL, AddressSpace.CONSTANT) \
            or not isinstance(e.type, ScalarType):
        return "the guard's test is not a load of a scalar from a global buffer"
    index = affine_of(e.index, model)
    if index is None or index.mentions_nonlinearly("gid0") or index.coeff("gid0") != 1 \
            or index.names() & set(model.counters):
        return "the guard's load is not at unit stride along x"
    return e


def _linear_in_x(term: ir.Expr, model: Model) -> bool:
    """Whether ``term`` is an ordering comparison of affine values, linear along x: the lanes
    of a block where it is false are those between two lanes where it is false."""
    bare = _strip(term)
    if not isinstance(bare, ir.Binary) or bare.op not in _ORDERINGS:
        return False
    p = constraint_of(bare, model)
    return p is not None and not p.mentions_nonlinearly("gid0") \
        and not p.names() & set(model.counters)


def plan_skip(loop: wg.WorkItemLoop, formed: FormedKernel, scalars: frozenset[str],
              narrow_ids: bool) -> wg.SkipPlan | str:
    """The block skip of ``loop`` (see the module docstring), or why it has none."""
    if loop.mask is not None or loop.plan is not None or formed.rows:
        return _OTHER_PLAN
    if formed.local_size[0] < 2:
        return _OTHER_PLAN
    model = model_of(loop.body, scalars, formed.local_size, rows=formed.rows,
                     narrow_ids=narrow_ids)
    stmts = loop.body.stmts if isinstance(loop.body, ir.Block) else (loop.body,)
    prefix: list[ir.Stmt] = []
    bounds: list[ir.Expr] = []
    for s in stmts:
        if _quiet_decl(s, formed.context_vars):
            if bounds:
                return "a declaration between the guard's tests"
            prefix.append(s)
            continue
        if not isinstance(s, ir.If) or s.otherwise is not None or not _is_exit(s.then):
            return _NO_GUARD
        for term in _terms(s.cond, "||"):
            operand = _zero_test(term)
            if operand is not None:
                load = _unit_stride_load(operand, model)
                if isinstance(load, str):
                    return load
                width = min(SKIP_LANES, formed.local_size[0])
                return wg.SkipPlan(tuple(prefix), tuple(bounds), load, width)
            if not _linear_in_x(term, model):
                return "a test of the guard before its load is not a comparison affine in x"
            bounds.append(term)
    return _NO_ZERO_TEST


class _Planner(Rewriter):
    def __init__(self, formed: FormedKernel, narrow_ids: bool) -> None:
        self.formed = formed
        self.narrow_ids = narrow_ids
        self.scalars = unwritten_int_params(formed.function.params, formed.body)
        self.notes: list[str] = []

    def rewrite_WorkItemLoop(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop:
        plan = plan_skip(loop, self.formed, self.scalars, self.narrow_ids)
        number = len(self.notes) + 1
        if isinstance(plan, str):
            if plan not in _UNGUARDED:  # a guard, but not one whose load blocks can test
                self.notes.append(f"work-item loop {number}: no skip ({plan})")
            else:
                self.notes.append("")
            return loop
        before = (f", the guard's {len(plan.bounds)} comparison(s) before it false at the "
                  "block's ends") if plan.bounds else ""
        self.notes.append(f"work-item loop {number}: blocks of {plan.width} lanes skipped "
                          f"where the load at {plan.load.loc.line}:{plan.load.loc.col} reads "
                          f"zero for all{before}")
        return dataclasses.replace(loop, skip=plan)


def skip_kernel(formed: FormedKernel, narrow_ids: bool) -> FormedKernel:
    """``formed`` with a ``SkipPlan`` on every work-item loop that has one (the copies of a
    split loop each get their own); one line per work-item loop added to the plans."""
    planner = _Planner(formed, narrow_ids)
    body = planner.rewrite(formed.body)
    notes = tuple(f"skip: {n}" for n in planner.notes if n)
    return dataclasses.replace(formed, body=body, plans=formed.plans + notes)
