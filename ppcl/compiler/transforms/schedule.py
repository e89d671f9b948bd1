"""Scheduling: every decision about how a formed kernel runs, recorded in the IR.

The printer (``codegen/kernel_c.py``) prints what this pass decides and decides nothing itself:

* per work-item loop, a plan (``WorkItemLoop.plan``): the work-items jammed through a
  per-work-item float reduction (``JamPlan``), a grid-stride loop run in lock step
  (``StridePlan``), or none (the plain loop); see ``transforms/jam.py``;
* ``FormedKernel.rows``: the group function runs a whole row of barrier-free groups along x as
  one work-item loop (``runs_rows``), unless an access is transposed to that order
  (``scattered_along_x``);
* ``FormedKernel.vectorize``: False turns gcc's loop vectorizer off for the group function;
* ``FormedKernel.widened`` and ``wide_positions``: ``int`` index arithmetic and group
  positions computed in 64 bits (``transforms/widen.py``);
* ``FormedKernel.plans``: one line per work-item loop saying which plan fired and why the
  others did not, and ``FormedKernel.loop_plans``: the same per loop of the kernel, with the
  interchange decided by formation (``PPCL_DEBUG=plans`` prints both).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.affine import affine_of, model_of
from ppcl.compiler.analysis.callgraph import helpers_using_workitems
from ppcl.compiler.analysis.effects import written_vars
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import AddressSpace, PointerType, ScalarType, VectorType
from ppcl.compiler.ir.visit import Rewriter, contains, find_all, walk
from ppcl.compiler.transforms.jam import plan_jam, plan_stride
from ppcl.compiler.transforms.widen import group_positions, widened_ints
from ppcl.compiler.transforms.workgroup import FormedKernel

_GROUP_VARYING = ("get_global_id", "get_local_id", "get_group_id")
_LINE_BYTES = 64  # a cache line: lanes this far apart along x share none


def runs_rows(formed: FormedKernel, wi_helpers: frozenset[str]) -> bool:
    """Whether the group function may run a row of groups along dimension 0 at once.

    Work-groups of a kernel without barriers, local memory or per-group state are independent
    down to their work-items, so a row of groups can run as one work-item loop over the row's
    global x range. The work-items of a 2D or 3D group then run in memory order, a whole row
    of the NDRange after another, instead of tile by tile: a 7-point stencil on 64x4 groups
    runs 1.6x faster because the hardware prefetchers follow long rows. A 1D range gains
    nothing, its groups already run in memory order. Rows need one
    work-item loop, at the top of the group function, and group-level code that does not
    depend on the group's position along dimension 0."""
    if formed.local_size[1] * formed.local_size[2] == 1:
        return False  # the groups of a 1D range already run in memory order
    stmts = formed.body.stmts
    loops = find_all(formed.body, wg.WorkItemLoop)
    if len(loops) != 1 or not any(s is loops[0] for s in stmts) or loops[0].mask is not None:
        return False
    if formed.context_vars or formed.masks or formed.local_vars or formed.group_scalars:
        return False
    if any(isinstance(p.type, PointerType) and p.type.space is AddressSpace.LOCAL
           for p in formed.function.params):
        return False
    for node in walk(formed.body):
        if isinstance(node, wg.GroupEval | wg.GroupCall):
            return False
        if isinstance(node, ir.Call) and node.name in wi_helpers:
            return False
    for s in stmts:
        if s is loops[0]:
            continue
        for node in walk(s):
            if isinstance(node, ir.Call) and node.builtin is not None \
                    and node.name in _GROUP_VARYING and const_int(node.args[0]) in (None, 0):
                return False
    return True


def scattered_along_x(formed: FormedKernel, narrow_ids: bool) -> str | None:
    """Where a memory access of the work-item loop walks across memory along x and along it
    along y (or z): lanes along x a cache line or more apart, lanes along y in the same line.
    Said as ``line:col`` and the stride; None when no access does.

    Rows of groups (``runs_rows``) help when lanes along x walk memory in order. An access
    that is transposed to that order (``a[n * gid0 + gid1]``: x walks down a column, y along
    a row) touches a new line per lane along x and comes back to it for the next y: a group
    run tile by tile comes back while the line is in L1, a whole row of groups after the
    line has left it. Gaussian elimination's row update on 16x16 groups of a 1024-wide matrix
    ran 2x slower as rows. An access strided along x but the same for every y (a column
    read by every row of a triangular update) is read again per row either way; the other
    accesses decide, and rows keep winning there."""
    loops = find_all(formed.body, wg.WorkItemLoop)
    if len(loops) != 1:
        return None
    scalars = frozenset(p.name for p in formed.function.params
                        if isinstance(p.type, ScalarType) and p.type.is_integer)
    model = model_of(loops[0].body, scalars, formed.local_size, rows=False,
                     narrow_ids=narrow_ids)
    for node in walk(loops[0].body):
        if not (isinstance(node, ir.Index) and isinstance(node.base.type, PointerType)):
            continue
        index = affine_of(node.index, model)
        if index is None:
            continue  # a gather gains or loses nothing from the order of the lanes
        size = getattr(node.type, "size", 0) or 1
        if index.mentions_nonlinearly("gid0"):
            across = "a run-time stride"
        elif abs(index.coeff("gid0")) * size >= _LINE_BYTES:
            across = f"{index.coeff('gid0')} elements"
        else:
            continue
        along = [d for d in ("gid1", "gid2") if not index.mentions_nonlinearly(d)
                 and 0 < abs(index.coeff(d)) * size < _LINE_BYTES]
        if along:
            return (f"the access at {node.loc.line}:{node.loc.col} moves along x by {across} "
                    f"and along {'y' if along[0] == 'gid1' else 'z'} within a cache line")
    return None


def vectorizes(loops: list[wg.WorkItemLoop], fast_math: bool) -> bool:
    """False for work-item loops that cannot vectorize because of a varying-trip float sum,
    and no other that could: gcc would vectorize the inner sums in order, which is slower than
    scalar. Fast math lets gcc reassociate the sums."""
    if fast_math or not any(w.serial_reduction for w in loops):
        return True
    return any(w.simd and not w.serial_reduction for w in loops)


def simd_vector_privates(loops: list[wg.WorkItemLoop]) -> bool:
    """Whether a work-item loop that may carry ``#pragma omp simd`` declares a private of a
    vector type. gcc 12's tree PRE drops every store of such a loop when a vector is built
    from loads and combined with another holding a load (a kernel tried as a new user would,
    a pixel read as four floats, wrote nothing at local size 16: the printed C is right and
    runs right with ``-fno-tree-pre``); the group function is compiled without that pass."""
    return any(w.simd and contains(w.body, _declares_vector) for w in loops)


def _declares_vector(node: object) -> bool:
    return isinstance(node, ir.VarDecl) and isinstance(node.type, VectorType)


class _Planner(Rewriter):
    """Attaches a plan to each work-item loop, and a line saying why, in program order."""

    def __init__(self, formed: FormedKernel, params: frozenset[str]):
        self.formed = formed
        self.params = params
        self.notes: list[str] = []
        # per work-item loop: the loop as planned, why no jam, why no grid-stride
        self.decided: list[tuple[wg.WorkItemLoop, str, str]] = []

    def rewrite_WorkItemLoop(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop:
        planned, why_jam, why_stride = self._plan(loop)
        self.decided.append((planned, why_jam, why_stride))
        return planned

    def _plan(self, loop: wg.WorkItemLoop) -> tuple[wg.WorkItemLoop, str, str]:
        number = len(self.notes) + 1
        if self.formed.rows:
            self.notes.append(f"work-item loop {number}: rows of groups, no jam or grid-stride")
            return loop, "rows of groups", "rows of groups"
        jam = plan_jam(loop, self.formed.local_size, self.formed.uniform_vars, self.params)
        if not isinstance(jam, str):
            self.notes.append(f"work-item loop {number}: jam by {jam.width}")
            return dataclasses.replace(loop, plan=jam), "", "jammed instead"
        stride = plan_stride(loop, self.formed.uniform_vars, self.params)
        if not isinstance(stride, str):
            self.notes.append(f"work-item loop {number}: grid-stride in lock step (no jam: "
                              f"{jam})")
            return dataclasses.replace(loop, plan=stride), jam, ""
        self.notes.append(f"work-item loop {number}: plain (no jam: {jam}; no grid-stride: "
                          f"{stride})")
        return loop, jam, stride


_LOOPS = (ir.For, ir.While, ir.DoWhile)


def loop_plans(formed: FormedKernel,
               decided: list[tuple[wg.WorkItemLoop, str, str]]) -> tuple[wg.LoopPlan, ...]:
    """Per loop of the kernel, the plan that fired and why the others did not: formation's
    interchange decision, then the plan of the work-item loop the loop runs in."""
    out: list[wg.LoopPlan] = []
    for d in formed.loops:
        if d.interchanged:
            out.append(wg.LoopPlan(d.loc, d.kind, "interchange"))
            continue
        if d.lockstep:
            out.append(wg.LoopPlan(d.loc, d.kind, "lock step"))
            continue
        if d.masked:
            out.append(wg.LoopPlan(d.loc, d.kind, "masked lock step", None,
                                   (("interchange", d.reason),)))
            continue
        no_interchange = ("interchange", d.reason)
        where = next((i for i, (w, _, _) in enumerate(decided) if any(
            isinstance(n, _LOOPS) and n.loc == d.loc for n in walk(w.body))), None)
        if where is None:  # a loop formation dropped or rebuilt (masked): no work-item plan
            out.append(wg.LoopPlan(d.loc, d.kind, "plain", None, (no_interchange,)))
            continue
        wil, why_jam, why_stride = decided[where]
        number = where + 1
        plan = wil.plan
        if isinstance(plan, wg.JamPlan) and plan.loop.loc == d.loc:
            out.append(wg.LoopPlan(d.loc, d.kind, "jam", number, (no_interchange,)))
        elif isinstance(plan, wg.StridePlan) and plan.loop.loc == d.loc:
            out.append(wg.LoopPlan(d.loc, d.kind, "grid-stride", number,
                                   (no_interchange, ("jam", why_jam))))
        else:
            if plan is not None:
                why_jam = why_stride = f"the plan is about the loop at {plan.loop.loc}"
            name = "rows" if formed.rows else "plain"
            out.append(wg.LoopPlan(d.loc, d.kind, name, number, (
                no_interchange, ("jam", why_jam), ("grid-stride", why_stride))))
    return tuple(out)


def schedule(module: ir.Module, formed: FormedKernel, *, fast_math: bool,
             narrow_ids: bool) -> FormedKernel:
    """``formed`` with every scheduling decision recorded (see the module docstring).

    ``narrow_ids``: every global id of a launch fits in ``int``, which lets group positions
    be computed 64 bits wide (``GroupPosition``)."""
    loops = find_all(formed.body, wg.WorkItemLoop)
    narrow_size = formed.local_size if narrow_ids else None
    # uniform values gain nothing from widening: they are not vectorized along work-items
    exclude = set(formed.context_vars) | set(formed.group_scalars) | formed.uniform_vars
    params = frozenset({q.name for q in formed.function.params} - written_vars(formed.body))
    # a jam of work-items that each stream their own row breaks the chains of their sums;
    # running rows of groups helps accesses along x, which such a loop has none of that move
    streams = {d.loc for d in formed.loops if d.streams_rows}
    jams = any(not isinstance(jam, str) and jam.loop.loc in streams
               for jam in (plan_jam(w, formed.local_size, formed.uniform_vars, params)
                           for w in loops))
    rows = not jams and runs_rows(formed, helpers_using_workitems(module))
    scattered = scattered_along_x(formed, narrow_ids) if rows else None
    decided = dataclasses.replace(
        formed,
        rows=rows and scattered is None,
        vectorize=vectorizes(loops, fast_math),
        no_pre=simd_vector_privates(loops),
        widened=frozenset(widened_ints(formed.body, exclude, narrow_size)),
        wide_positions=group_positions(formed.body, narrow_size),
    )
    planner = _Planner(decided, params)
    body = planner.rewrite(formed.body)
    notes = planner.notes if scattered is None else [f"no rows of groups: {scattered}"] + planner.notes
    return dataclasses.replace(decided, body=body, plans=decided.plans + tuple(notes),
                               loop_plans=loop_plans(decided, planner.decided))
