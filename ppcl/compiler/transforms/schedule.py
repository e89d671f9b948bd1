"""Scheduling: every decision about how a formed kernel runs, recorded in the IR.

The printer (``codegen/kernel_c.py``) prints what this pass decides and decides nothing itself:

* per work-item loop, a plan (``WorkItemLoop.plan``): the work-items jammed through a
  per-work-item float reduction (``JamPlan``), a grid-stride loop run in lock step
  (``StridePlan``), or none (the plain loop); see ``transforms/jam.py``;
* ``FormedKernel.rows``: the group function runs a whole row of barrier-free groups along x as
  one work-item loop (``runs_rows``);
* ``FormedKernel.vectorize``: False turns gcc's loop vectorizer off for the group function;
* ``FormedKernel.widened`` and ``wide_positions``: ``int`` index arithmetic and group
  positions computed in 64 bits (``transforms/widen.py``);
* ``FormedKernel.plans``: one line per work-item loop saying which plan fired and why the
  others did not (``PPCL_DEBUG=plans`` prints them).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.callgraph import helpers_using_workitems
from ppcl.compiler.analysis.effects import written_vars
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import AddressSpace, PointerType
from ppcl.compiler.ir.visit import Rewriter, find_all, walk
from ppcl.compiler.transforms.jam import plan_jam, plan_stride
from ppcl.compiler.transforms.widen import group_positions, widened_ints
from ppcl.compiler.transforms.workgroup import FormedKernel

_GROUP_VARYING = ("get_global_id", "get_local_id", "get_group_id")


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
        if isinstance(node, ir.Call) and (node.name == "printf" or node.name in wi_helpers):
            return False
    for s in stmts:
        if s is loops[0]:
            continue
        for node in walk(s):
            if isinstance(node, ir.Call) and node.builtin is not None \
                    and node.name in _GROUP_VARYING and const_int(node.args[0]) in (None, 0):
                return False
    return True


def vectorizes(loops: list[wg.WorkItemLoop], fast_math: bool) -> bool:
    """False for work-item loops that cannot vectorize because of a varying-trip float sum,
    and no other that could: gcc would vectorize the inner sums in order, which is slower than
    scalar. Fast math lets gcc reassociate the sums."""
    if fast_math or not any(w.serial_reduction for w in loops):
        return True
    return any(w.simd and not w.serial_reduction for w in loops)


class _Planner(Rewriter):
    """Attaches a plan to each work-item loop, and a line saying why, in program order."""

    def __init__(self, formed: FormedKernel, params: frozenset[str]):
        self.formed = formed
        self.params = params
        self.notes: list[str] = []

    def rewrite_WorkItemLoop(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop:
        number = len(self.notes) + 1
        if self.formed.rows:
            self.notes.append(f"work-item loop {number}: rows of groups, no jam or grid-stride")
            return loop
        jam = plan_jam(loop, self.formed.local_size, self.formed.uniform_vars, self.params)
        if not isinstance(jam, str):
            self.notes.append(f"work-item loop {number}: jam by {jam.width}")
            return dataclasses.replace(loop, plan=jam)
        stride = plan_stride(loop, self.formed.uniform_vars, self.params)
        if not isinstance(stride, str):
            self.notes.append(f"work-item loop {number}: grid-stride in lock step (no jam: "
                              f"{jam})")
            return dataclasses.replace(loop, plan=stride)
        self.notes.append(f"work-item loop {number}: plain (no jam: {jam}; no grid-stride: "
                          f"{stride})")
        return loop


def schedule(module: ir.Module, formed: FormedKernel, *, fast_math: bool,
             narrow_ids: bool) -> FormedKernel:
    """``formed`` with every scheduling decision recorded (see the module docstring).

    ``narrow_ids``: every global id of a launch fits in ``int``, which lets group positions
    be computed 64 bits wide (``GroupPosition``)."""
    loops = find_all(formed.body, wg.WorkItemLoop)
    narrow_size = formed.local_size if narrow_ids else None
    # uniform values gain nothing from widening: they are not vectorized along work-items
    exclude = set(formed.context_vars) | set(formed.group_scalars) | formed.uniform_vars
    decided = dataclasses.replace(
        formed,
        rows=runs_rows(formed, helpers_using_workitems(module)),
        vectorize=vectorizes(loops, fast_math),
        widened=frozenset(widened_ints(formed.body, exclude, narrow_size)),
        wide_positions=group_positions(formed.body, narrow_size),
    )
    params = frozenset({q.name for q in formed.function.params} - written_vars(formed.body))
    planner = _Planner(decided, params)
    body = planner.rewrite(formed.body)
    return dataclasses.replace(decided, body=body, plans=tuple(planner.notes))
