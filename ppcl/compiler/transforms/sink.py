"""Uniform stores sunk: a flag store every lane that changed something makes, run once.

    if (updating[tid]) { mask[tid] = 1; visited[tid] = 1; *over = 1; updating[tid] = 0; }

Every lane that passes stores the same value to the same address. gcc does not vectorize a
loop holding a conditional store to one address, so the lanes run one after another, a branch
each on data that changes from lane to lane (a breadth-first search's update kernel at a dense
level: 2-4 ms where the same loop without that store vectorizes and takes 0.12-0.19 ms). The
lanes may as well set a flag, a reduction gcc vectorizes, and the group store the value once
after its loop where the flag is set: a lane's stores to other memory are unordered against
other lanes' without a barrier, so only the lane's own later accesses could tell the store
moved, and then only where they touch the stored bytes. So the plan applies where the store is
the only use of its pointer in the loop and every other memory access of the loop is an index
into a buffer argument that the affine model bounds over the group's lanes; the printer tests
at group level that those ranges miss the stored bytes, and runs the loop as formed where one
does not (the same buffer passed twice, or overlapping sub-buffers).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.affine import Model, Poly, affine_of, model_of
from ppcl.compiler.analysis.effects import unwritten_int_params
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import AddressSpace, PointerType, ScalarType
from ppcl.compiler.ir.visit import Rewriter, walk
from ppcl.compiler.transforms.split import _best, _strip, poly_expr
from ppcl.compiler.transforms.workgroup import FormedKernel

_BUFFERS = (AddressSpace.GLOBAL, AddressSpace.CONSTANT)


def _buffer_param(e: ir.Expr, params: dict[str, ir.Param]) -> str | None:
    """The name of the global or constant pointer argument ``e`` names, or None."""
    e = _strip(e)
    if not isinstance(e, ir.VarRef) or e.name not in params:
        return None
    t = params[e.name].type
    return e.name if isinstance(t, PointerType) and t.space in _BUFFERS else None


def _uniform_target(e: ir.Expr, params: dict[str, ir.Param]) -> str | None:
    """The pointer argument of ``*p`` or ``p[k]`` (``k`` a literal), not volatile."""
    if isinstance(e, ir.Unary) and e.op == "*":
        name = _buffer_param(e.operand, params)
    elif isinstance(e, ir.Index) and isinstance(_strip(e.index), ir.IntLit):
        name = _buffer_param(e.base, params)
    else:
        return None
    if name is None or getattr(params[name].type, "volatile", False):
        return None
    return name


def _literal(e: ir.Expr) -> bool:
    e = _strip(e)
    if isinstance(e, ir.Cast):
        return _literal(e.operand)
    return isinstance(e, ir.IntLit | ir.FloatLit)


def _range(index: ir.Expr, model: Model) -> tuple[Poly, Poly] | None:
    """The lowest and highest value of ``index`` over the group's lanes, or None."""
    p = affine_of(index, model)
    if p is None:
        return None
    high, low = _best(p, model), _best(-p, model)
    return None if high is None or low is None else (-low, high)


def plan_sink(loop: wg.WorkItemLoop, formed: FormedKernel, scalars: frozenset[str],
              narrow_ids: bool) -> wg.SinkPlan | str:
    """The sunk store of ``loop`` (see the module docstring), or why it has none."""
    params = {p.name: p for p in formed.function.params}
    stores = [s for s in walk(loop.body) if isinstance(s, ir.ExprStmt)
              and isinstance(s.expr, ir.Assign) and s.expr.op == "="
              and _uniform_target(s.expr.target, params) is not None
              and _literal(s.expr.value)]
    if len(stores) != 1:
        return "no store of a literal to a uniform address" if not stores \
            else "several uniform stores"
    if loop.plan is not None or formed.rows:
        return "the loop runs jammed, strided or as rows"
    store = stores[0]
    assert isinstance(store.expr, ir.Assign)
    target = store.expr.target
    pointer = _uniform_target(target, params)
    model = model_of(loop.body, scalars, formed.local_size, rows=formed.rows,
                     narrow_ids=narrow_ids)
    target_refs = {id(n) for n in walk(target) if isinstance(n, ir.VarRef)}
    others: list[tuple[ir.Expr, ir.Expr, ir.Expr]] = []
    bases: set[int] = set()
    for node in walk(loop.body):
        if node is target:
            continue
        if isinstance(node, ir.Index) and _buffer_param(node.base, params) is not None:
            name = _buffer_param(node.base, params)
            if name == pointer:
                return "the stored pointer is used again in the loop"
            bounds = _range(node.index, model)
            if bounds is None:
                return f"the access at {node.loc.line}:{node.loc.col} is not bounded over " \
                       "the group"
            bases.add(id(_strip(node.base)))
            base = _strip(node.base)
            others.append((base, poly_expr(bounds[0], params), poly_expr(bounds[1], params)))
        elif isinstance(node, ir.Call) and node.builtin is None:
            return "a call in the loop"
    for node in walk(loop.body):
        if isinstance(node, ir.VarRef) and isinstance(node.type, PointerType) \
                and node.type.space in _BUFFERS and id(node) not in bases \
                and id(node) not in target_refs:
            return f"a pointer used other than as an indexed buffer at {node.loc.line}:" \
                   f"{node.loc.col}"
    if not isinstance(target.type, ScalarType):
        return "the stored value is not a scalar"
    return wg.SinkPlan(store, target, tuple(others))


class _Planner(Rewriter):
    def __init__(self, formed: FormedKernel, narrow_ids: bool) -> None:
        self.formed = formed
        self.narrow_ids = narrow_ids
        self.scalars = unwritten_int_params(formed.function.params, formed.body)
        self.count = 0
        self.notes: list[str] = []

    def rewrite_WorkItemLoop(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop:
        self.count += 1
        plan = plan_sink(loop, self.formed, self.scalars, self.narrow_ids)
        if isinstance(plan, str):
            if not plan.startswith("no store"):
                self.notes.append(f"work-item loop {self.count}: no sunk store ({plan})")
            return loop
        loc = plan.store.loc
        self.notes.append(f"work-item loop {self.count}: the store at {loc.line}:{loc.col} "
                          "runs once after the loop, where the group's other accesses miss "
                          f"it ({len(plan.others)} tested)")
        return dataclasses.replace(loop, sink=plan)


def sink_kernel(formed: FormedKernel, narrow_ids: bool) -> FormedKernel:
    """``formed`` with a ``SinkPlan`` on every work-item loop that has one; a line per loop
    that has one, or has a uniform store it cannot sink, added to the plans."""
    planner = _Planner(formed, narrow_ids)
    body = planner.rewrite(formed.body)
    notes = tuple(f"sink: {n}" for n in planner.notes)
    return dataclasses.replace(formed, body=body, plans=formed.plans + notes)
