"""Which private variables live across the parallel regions of a formed kernel.

After work-group formation a kernel body is group-level code with ``WorkItemLoop`` regions in
it. A private variable whose every reference (declaration included) sits inside one region is
region-local: each work-item's copy lives and dies within one iteration of the work-item loop,
so it stays a plain C local that the compiler can keep in a register and vectorize. A variable
referenced in two regions, or by group-level code, carries a value from one region to another
(or is read at group level), so it needs one copy per work-item (a context array) or, when it is
uniform, one group scalar; unless every region referencing it declares it (copies of one
statement in several regions), when each copy is region-local. Variable names are unique per function (the front end guarantees
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
from ppcl.compiler.ir.visit import Node, children, declared_names

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


def reference_units(body: ir.Stmt, declared: dict[str, set[int]] | None = None
                    ) -> dict[str, set[int]]:
    """For each variable name: the regions (numbered in pre-order) and ``GROUP_LEVEL`` where
    it is referenced; ``declared`` gets, per name, the regions that declare it."""
    units: dict[str, set[int]] = {}
    counter = 0

    def visit(node: Node) -> None:
        nonlocal counter
        if isinstance(node, wg.WorkItemLoop):
            unit = counter
            counter += 1
            for name in _names_in(node.body):
                units.setdefault(name, set()).add(unit)
            if declared is not None:
                for name in declared_names(node.body):
                    declared.setdefault(name, set()).add(unit)
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
    """The ``candidates`` referenced in more than one region or at group level, but those
    that every region referencing them declares: copies of one statement in several regions
    (a masked loop's body and the rest of the loop its last lanes run alone,
    ``transforms/workgroup.py``), each with its own variable, which no value leaves."""
    declared: dict[str, set[int]] = {}
    units = reference_units(body, declared)
    return {name for name in candidates
            if (len(units.get(name, ())) > 1 or GROUP_LEVEL in units.get(name, ()))
            and not (GROUP_LEVEL not in units.get(name, ())
                     and units.get(name, set()) <= declared.get(name, set()))}
