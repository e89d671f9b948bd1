"""The call graph of a module, and which functions reach a given kind of call.

Several passes ask the same question of helper functions: does this function, directly or
through the functions it calls, use work-item ids, reach a barrier, use atomics? ``reaching``
answers it once for every function; the front end has already rejected recursion.
"""

from __future__ import annotations

from collections.abc import Callable

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import walk


def user_calls(node: object) -> set[str]:
    """Names of the user (non-builtin) functions called inside ``node``."""
    return {n.name for n in walk(node) if isinstance(n, ir.Call) and n.builtin is None}


def call_graph(module: ir.Module) -> dict[str, set[str]]:
    """Each defined function -> the user functions it calls directly."""
    return {f.name: user_calls(f.body) for f in module.functions}


def reaching(module: ir.Module, uses: Callable[[ir.Call], bool]) -> frozenset[str]:
    """The defined functions containing a builtin call for which ``uses`` holds, directly or
    through a function they call."""
    graph = call_graph(module)
    found = {f.name for f in module.functions
             if any(isinstance(n, ir.Call) and n.builtin is not None and uses(n)
                    for n in walk(f.body))}
    changed = True
    while changed:
        changed = False
        for name, callees in graph.items():
            if name not in found and callees & found:
                found.add(name)
                changed = True
    return frozenset(found)


WORKITEM_FUNCTIONS = ("get_global_id", "get_local_id", "get_group_id", "get_local_size",
                      "get_global_size", "get_num_groups", "get_global_offset", "get_work_dim")


def helpers_using_workitems(module: ir.Module) -> frozenset[str]:
    """The helper (non-kernel) functions that query work-item functions or print (a printf
    record carries the work-item's id), directly or through a function they call: the C
    backend passes them the work-item's position."""
    helpers = {f.name for f in module.functions if not f.is_kernel}
    return reaching(module, lambda call: call.name in (*WORKITEM_FUNCTIONS, "printf")) \
        & helpers
