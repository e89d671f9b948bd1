"""Whole-program checks of the front end: calls reach defined functions, and no recursion.

OpenCL C forbids recursion; ppcl also needs it gone because the CPU backend inlines and the
work-group formation needs a finite call tree. A cycle is reported once, at the call that
closes it, naming every function on it.
"""

from __future__ import annotations

from ppcl.compiler.diagnostics import Diagnostics, Loc


def check_calls(diagnostics: Diagnostics, calls: dict[str, list[tuple[str, Loc]]],
                defined: set[str], shown: dict[str, str] | None = None) -> None:
    """``calls`` maps each defined function to the (callee, location) of its calls;
    ``shown`` spells the IR names that are not the source's (overloads: ``f(float)``)."""
    spelled = shown or {}
    for caller, sites in calls.items():
        for callee, loc in sites:
            if callee not in defined:
                diagnostics.error(loc, f"function '{spelled.get(callee, callee)}' is called by "
                                       f"'{spelled.get(caller, caller)}' but never defined")
    reported: set[frozenset[str]] = set()
    for start in calls:
        _find_cycles(start, calls, diagnostics, reported, spelled)


def _find_cycles(start: str, calls: dict[str, list[tuple[str, Loc]]], diagnostics: Diagnostics,
                 reported: set[frozenset[str]], spelled: dict[str, str]) -> None:
    # Iterative DFS from ``start`` looking for a path back to ``start``.
    stack: list[tuple[str, list[str], Loc | None]] = [(start, [start], None)]
    visited: set[str] = set()
    while stack:
        node, path, _ = stack.pop()
        for callee, loc in calls.get(node, []):
            if callee == start:
                cycle = path + [start]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    chain = " -> ".join(f"'{spelled.get(name, name)}'" for name in cycle)
                    kind = "recursive call" if len(cycle) == 2 else "mutual recursion"
                    diagnostics.error(loc, f"{kind} is not allowed in OpenCL C: {chain}")
                continue
            if callee in visited or callee not in calls:
                continue
            visited.add(callee)
            stack.append((callee, path + [callee], loc))
