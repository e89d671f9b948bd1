"""Which private variables live across the parallel regions of a formed kernel.

After work-group formation a kernel body is group-level code with ``WorkItemLoop`` regions in
it. A private variable whose every reference (declaration included) sits inside one region is
region-local: each work-item's copy lives and dies within one iteration of the work-item loop,
so it stays a plain C local that the compiler can keep in a register and vectorize. A variable
referenced in two regions, or by group-level code, carries a value from one region to another
(or is read at group level), so it needs one copy per work-item (a context array) or, when it is
uniform, one group scalar. Variable names are unique per function (the front end guarantees
it), so a reference is identified by name alone.

An ``if`` on ``MaskAll`` chooses between two formings of the same statements (all work-items
active, or some masked off): exactly one runs, so the i-th region of one branch and the i-th
region of the other share a number, and a variable that lives within one region of each copy
stays region-local.
"""

from __future__ import annotations

from collections.abc import Iterable

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import Node, children

GROUP_LEVEL = -1  # the unit number of group-level code


def _names_in(node: Node) -> Iterable[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ir.VarRef):
            yield current.name
        elif isinstance(current, ir.DeclStmt):
            for d in current.decls:
                yield d.name
        elif isinstance(current, wg.ContextRef | wg.ContextInit):
            yield current.name
        stack.extend(children(current))


def reference_units(body: ir.Stmt) -> dict[str, set[int]]:
    """For each variable name: the regions (numbered in pre-order) and ``GROUP_LEVEL`` where
    it is referenced."""
    units: dict[str, set[int]] = {}
    counter = 0

    def visit(node: Node) -> None:
        nonlocal counter
        if isinstance(node, wg.WorkItemLoop):
            unit = counter
            counter += 1
            for name in _names_in(node.body):
                units.setdefault(name, set()).add(unit)
            return
        if isinstance(node, ir.If) and isinstance(node.cond, wg.MaskAll):
            start = counter
            visit(node.then)
            end = counter
            if node.otherwise is not None:
                counter = start
                visit(node.otherwise)
            counter = max(counter, end)
            return
        if isinstance(node, ir.VarRef):
            units.setdefault(node.name, set()).add(GROUP_LEVEL)
        elif isinstance(node, ir.DeclStmt):
            for d in node.decls:
                units.setdefault(d.name, set()).add(GROUP_LEVEL)
        for child in children(node):
            visit(child)

    visit(body)
    return units


def live_across_regions(body: ir.Stmt, candidates: Iterable[str]) -> set[str]:
    """The ``candidates`` referenced in more than one region or at group level."""
    units = reference_units(body)
    return {name for name in candidates
            if len(units.get(name, ())) > 1 or GROUP_LEVEL in units.get(name, ())}
