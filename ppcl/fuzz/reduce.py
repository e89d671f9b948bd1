"""Reduction of a failing program to a small reproducer: delta debugging over body lines.

Zeller and Hildebrandt's ddmin on the kernel body, a statement (or a brace) a line: drop
chunks of lines, halving the chunk size, and keep a smaller body whenever the program still
fails the same way (``Outcome.same_failure``). A candidate whose braces no longer balance, or
that uses a variable it no longer declares, fails to build and is simply not kept. The first
lines (the work-item ids and the output's reset) stay.
"""

from __future__ import annotations

from ppcl.fuzz.generate import FuzzProgram
from ppcl.fuzz.run import Outcome, Runner

_KEPT = 2  # gid and lid


def _balanced(lines: list[str]) -> bool:
    depth = 0
    for line in lines:
        depth += line.count("{") - line.count("}")
        if depth < 0:
            return False
    return depth == 0


def _block_end(lines: list[str], start: int) -> int | None:
    """The index of the line closing the block ``lines[start]`` opens (through ``} else {``
    lines), or None when it opens none."""
    if not lines[start].rstrip().endswith("{") or lines[start].lstrip().startswith("}"):
        return None
    depth = 0
    for index in range(start, len(lines)):
        depth += lines[index].count("{") - lines[index].count("}")
        if depth == 0:
            return index
    return None


def reduce_program(program: FuzzProgram, failure: Outcome, run: Runner,
                   budget: int = 400) -> tuple[FuzzProgram, int]:
    """The smallest program found that fails like ``failure``, and the runs it took (at
    most ``budget``)."""
    fixed = list(program.body[:_KEPT])
    lines = list(program.body[_KEPT:])
    runs = 0
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and runs < budget:
        start = 0
        removed_any = False
        while start < len(lines) and runs < budget:
            candidate = lines[:start] + lines[start + chunk:]
            if not _balanced(candidate):
                start += chunk
                continue
            runs += 1
            outcome = run(program.with_body(tuple(fixed + candidate)))
            if failure.same_failure(outcome):
                lines = candidate
                removed_any = True
            else:
                start += chunk
        if not removed_any:
            chunk //= 2
    # whole blocks (an if with its else, a loop), which chunks of lines cut through
    start = 0
    while start < len(lines) and runs < budget:
        end = _block_end(lines, start)
        if end is not None:
            candidate = lines[:start] + lines[end + 1:]
            runs += 1
            if failure.same_failure(run(program.with_body(tuple(fixed + candidate)))):
                lines = candidate
                continue
        start += 1
    return program.with_body(tuple(fixed + lines)), runs
