"""The call graph of a module, and which functions reach a given kind of call.

Several passes ask the same question of helper functions: does this function, directly or
through the functions it calls, use work-item ids, reach a barrier, use atomics? ``reaching``
answers it once for every function; the front end has already rejected recursion.
"""

from __future__ import annotations

from collections.abc import Callable

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import lookup as lookup_builtin
from ppcl.compiler.ir.types import AddressSpace, ArrayType, PointerType
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


def builtin_family(call: ir.Call) -> str | None:
    """The family of a builtin call's entry in the builtin table (None for a user call)."""
    if call.builtin is None:
        return None
    try:
        return lookup_builtin(call.builtin).family
    except KeyError:
        return None


def arithmetic_helpers(module: ir.Module) -> frozenset[str]:
    """The helper functions that only compute from their values: no pointer parameter,
    variable or access to memory other than their own private arrays, no builtin that
    touches memory or sees the NDRange (``_MEMORY_FAMILIES``), and calls only to such
    helpers. A call to one is arithmetic like a builtin's."""
    candidates: dict[str, ir.Function] = {}
    for f in module.functions:
        if f.is_kernel or f.body is None or any(isinstance(p.type, PointerType)
                                                for p in f.params):
            continue
        own = {n.name for n in walk(f.body) if isinstance(n, ir.VarDecl)
               and isinstance(n.type, ArrayType) and n.space is AddressSpace.PRIVATE}
        if any(_touches_memory(n, own) for n in walk(f.body)):
            continue
        candidates[f.name] = f
    graph = call_graph(module)
    changed = True
    while changed:
        changed = False
        for name in list(candidates):
            if not graph.get(name, set()) <= set(candidates):
                del candidates[name]
                changed = True
    return frozenset(candidates)


# builtin families that read or write memory, order work-items or see the NDRange
_MEMORY_FAMILIES = frozenset(("workitem", "vload", "vstore", "sync", "async", "atomic",
                              "printf", "image"))


def _touches_memory(n: object, own: set[str]) -> bool:
    """Whether node ``n`` of a helper reaches memory other than the ``own`` private arrays
    (a program-scope table read by name is memory too)."""
    if isinstance(n, ir.VarDecl):
        return isinstance(n.type, PointerType) or n.space is not AddressSpace.PRIVATE
    if isinstance(n, ir.Index):
        return not (isinstance(n.base, ir.VarRef) and n.base.name in own)
    if isinstance(n, ir.Unary) and n.op == "*":
        return True
    return isinstance(n, ir.Call) and builtin_family(n) in _MEMORY_FAMILIES


# the builtins through which a work-item sees how the NDRange is cut into work-groups
GROUPING_FUNCTIONS = frozenset(("get_local_id", "get_group_id", "get_local_size",
                                "get_num_groups", "barrier", "work_group_barrier",
                                "async_work_group_copy", "async_work_group_strided_copy",
                                "wait_group_events"))


def reachable(module: ir.Module, name: str) -> list[ir.Function]:
    """The defined function ``name`` and every defined function it calls, directly or not."""
    graph = call_graph(module)
    by_name = {f.name: f for f in module.functions}
    seen, todo = [name], [name]
    while todo:
        for callee in sorted(graph.get(todo.pop(), ())):
            if callee not in seen and callee in by_name:
                seen.append(callee)
                todo.append(callee)
    return [by_name[n] for n in seen if n in by_name]


def grouping_observed(module: ir.Module, kernel_name: str) -> str | None:
    """Why kernel ``kernel_name`` can tell how its NDRange is cut into work-groups, or None
    when it cannot: it (with the functions it calls) asks for no local or group id, local size
    or group count, reaches no barrier or group copy, has no ``__local`` memory and no
    required work-group size. Such a kernel computes the same with any local size that
    divides the global size, so a device may run it with groups of its own choosing."""
    functions = reachable(module, kernel_name)
    if not functions:
        return "it has no body"
    kernel = functions[0]
    if kernel.attrs.reqd_work_group_size is not None:
        return "it requires a work-group size (reqd_work_group_size)"
    for param in kernel.params:
        if isinstance(param.type, PointerType) and param.type.space is AddressSpace.LOCAL:
            return f"its argument '{param.name}' is __local memory"
    for function in functions:
        for node in walk(function.body):
            if isinstance(node, ir.Call) and node.builtin is not None \
                    and node.name in GROUPING_FUNCTIONS:
                return f"it calls {node.name} at {node.loc.line}:{node.loc.col}"
            if isinstance(node, ir.VarDecl) and node.space is AddressSpace.LOCAL:
                return f"it declares __local '{node.name}' at {node.loc.line}:{node.loc.col}"
    return None


def work_item_loops(module: ir.Module, kernel_name: str) -> bool:
    """Whether a work-item of kernel ``kernel_name`` may run a loop (a ``for``, ``while`` or
    ``do`` in it or in a function it calls): without one, a work-item's work is a few
    statements, and a launch has about as much work as it has work-items."""
    return any(isinstance(node, ir.For | ir.While | ir.DoWhile)
               for function in reachable(module, kernel_name) for node in walk(function.body))
