"""Cache-line reuse distances of one buffer's accesses under a device's execution order, and the
layout choice of PPOpenCL's Algorithm 3 built on them.

The reuse (LRU stack) distance of an access is the number of distinct cache lines touched since
the previous access to the same line (Ding and Zhong's metric, which the paper computes on its
work-item-interleaved CFG). This analysis simulates the address trace of the accesses to one
pointer argument for a sample of the first work-group:

* ``serial`` order: work-item after work-item (dimension 0 fastest), each running its loops;
* ``data-parallel`` order: ``lanes`` consecutive work-items along ``vector_dim`` perform each
  access together (lane by lane in the trace), then the next access or loop iteration, then
  the next chunk of lanes.

Addresses are element indices (``analysis.layout.poly_of``) times the element size, mapped to
lines of ``order.line_bytes``; for the transposed layout an index ``e`` becomes
``(e mod C)*R + e div C``. Approximations, chosen so the sample stays cheap (well under 50 ms):
both branches of every ``if`` run (conditions are not evaluated); a ``for`` loop whose bounds
are literals or scalar arguments runs its real trip count (from its first lane, capped at
``MAX_TRIPS``), any other loop runs ``DEFAULT_TRIPS`` times with its counter, if it has one,
counting from its start value (or 0); in an index, a value that is no polynomial (an opaque
row of ``analysis.layout``) stands for its variable's initial value where the variable is
declared with one (periodic streaming's ``xs = x - CX[q]`` as ``x``, before its wrap), and
what is still unknown (a load, a division) for 0; other accesses whose index depends on
memory or on variables the model does not know are left out of the trace; the trace stops after ``MAX_EVENTS``
accesses and ``MAX_ITEMS`` work-items.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ppcl.compiler.analysis.affine import Poly
from ppcl.compiler.analysis.layout import (
    Symbols,
    TransposeFacts,
    counted_loop,
    indexed,
    is_site,
    poly_of,
    site_poly,
    struct_fields,
    symbols_of,
)
from ppcl.compiler.analysis.order import SERIAL, ExecutionOrder
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType
from ppcl.compiler.ir.visit import Node, children

MAX_EVENTS = 6000
MAX_ITEMS = 256
MAX_TRIPS = 64
DEFAULT_TRIPS = 8


@dataclass(frozen=True)
class ReuseDistance:
    """The reuse distances of one simulated trace."""

    mean: float  # mean distance in distinct lines over the reuses; inf when nothing is reused
    reuses: int
    lines: int  # distinct lines touched
    accesses: int  # the sample: accesses simulated
    work_items: int

    def describe(self) -> str:
        mean = "no reuse" if math.isinf(self.mean) else f"mean reuse distance {self.mean:.2f}"
        return (f"{mean} over {self.reuses} reuses; {self.lines} lines touched by "
                f"{self.accesses} accesses of {self.work_items} work-items")


# ---------------------------------------------------------------- the skeleton


@dataclass(frozen=True)
class _Access:
    index: Poly | None


@dataclass(frozen=True)
class _Loop:
    counter: str | None
    low: Poly | None
    high: Poly | None  # exclusive
    step: int
    body: tuple[_Access | _Loop, ...]


_Skeleton = tuple[_Access | _Loop, ...]


def _skeleton(node: Node, param: str, syms: Symbols) -> _Skeleton:
    """The accesses to ``param`` and the loops around them, in execution order."""
    if isinstance(node, ir.For):
        head = _skeleton(node.init, param, syms) if node.init is not None else ()
        body = _skeleton(node.body, param, syms)
        for part in (node.cond, node.step):
            if part is not None:
                body += _skeleton(part, param, syms)
        return head + (_counted(node, syms, body),)
    if isinstance(node, ir.While | ir.DoWhile):
        body = _skeleton(node.body, param, syms) + _skeleton(node.cond, param, syms)
        return (_Loop(None, None, None, 1, body),)
    if is_site(node, param):
        element = node.base if isinstance(node, ir.Member) else node
        assert isinstance(element, ir.Index)
        index = element.index
        return _skeleton(index, param, syms) + (_Access(_approximate_site(node, syms)),)
    if isinstance(node, ir.Assign):  # the value is computed before the store
        return _skeleton(node.value, param, syms) + _skeleton(node.target, param, syms)
    out: _Skeleton = ()
    for child in children(node):
        out += _skeleton(child, param, syms)
    return out


def _with_atoms(poly_of_it: Callable[[], Poly | None],
                syms: Symbols) -> tuple[Poly | None, dict[str, ir.Expr]]:
    """``poly_of_it()`` with opaque values admitted as atoms, and the atoms it named."""
    syms.opaque = {}
    try:
        return poly_of_it(), dict(syms.opaque)
    finally:
        syms.opaque = None


def _approximate_site(site: ir.Expr, syms: Symbols) -> Poly | None:
    """The site's index with its opaque atoms replaced (see the module's note)."""
    poly, atoms = _with_atoms(lambda: site_poly(site, syms), syms)
    if poly is None or not atoms:
        return poly
    return _substitute(poly, {name: _approximate(e, syms, 0) for name, e in atoms.items()})


def _approximate(e: ir.Expr, syms: Symbols, depth: int) -> Poly:
    """An opaque value as a polynomial without opaque atoms: a variable's initial value, 0
    for anything else."""
    init = syms.initial.get(e.name) if isinstance(e, ir.VarRef) else None
    if init is None or depth >= _MAX_DEPTH:
        return Poly.const(0)
    poly, atoms = _with_atoms(lambda: poly_of(init, syms), syms)
    if poly is None:
        return Poly.const(0)
    return _substitute(poly, {n: _approximate(a, syms, depth + 1) for n, a in atoms.items()})


def _substitute(p: Poly, values: Mapping[str, Poly]) -> Poly:
    total = Poly()
    for mono, coeff in p.terms:
        term = Poly.const(coeff)
        for name in mono:
            term = term * values.get(name, Poly.var(name))
        total = total + term
    return total


_MAX_DEPTH = 4


def _counted(loop: ir.For, syms: Symbols, body: _Skeleton) -> _Loop:
    """The loop with its counter and bounds where ``analysis.layout.counted_loop`` finds
    them."""
    counted = counted_loop(loop, syms)
    if counted is None:
        return _Loop(None, None, None, 1, body)
    name, low, high, step = counted
    return _Loop(name, low, high, step, body)


# ---------------------------------------------------------------- the trace


class _Full(Exception):
    pass


def _evaluate(p: Poly | None, env: Mapping[str, int]) -> int | None:
    if p is None:
        return None
    try:
        return p.evaluate(env)
    except KeyError:
        return None


def _run(nodes: _Skeleton, envs: list[dict[str, int]], trace: list[int]) -> None:
    for node in nodes:
        if isinstance(node, _Access):
            for env in envs:
                value = _evaluate(node.index, env)
                if value is not None and value >= 0:
                    trace.append(value)
            if len(trace) >= MAX_EVENTS:
                raise _Full
            continue
        low = _evaluate(node.low, envs[0])
        high = _evaluate(node.high, envs[0])
        start = low if low is not None else 0
        if high is None:
            trips = DEFAULT_TRIPS
        else:
            trips = min(MAX_TRIPS, max(0, -(-(high - start) // node.step)))
        for k in range(trips):
            if node.counter is not None:
                for env in envs:
                    env[node.counter] = start + k * node.step
            _run(node.body, envs, trace)


def _work_items(order: ExecutionOrder, local_size: tuple[int, int, int]) -> list[tuple[int, ...]]:
    """The first work-group's local ids, the order's fastest dimension first."""
    fastest = 0 if order.kind == SERIAL else order.vector_dim
    dims = [fastest] + [d for d in range(3) if d != fastest]
    items: list[tuple[int, ...]] = []
    for c in range(local_size[dims[2]]):
        for b in range(local_size[dims[1]]):
            for a in range(local_size[dims[0]]):
                lid = [0, 0, 0]
                lid[dims[0]], lid[dims[1]], lid[dims[2]] = a, b, c
                items.append(tuple(lid))
                if len(items) >= MAX_ITEMS:
                    return items
    return items


def _environment(lid: tuple[int, ...], global_size: tuple[int, int, int],
                 local_size: tuple[int, int, int], values: Mapping[str, int]) -> dict[str, int]:
    env = {k: int(v) for k, v in values.items()}
    for d in range(3):
        env[f"gid{d}"] = env[f"lid{d}"] = lid[d]
        env[f"grp{d}"] = 0
        env[f"gsize{d}"] = global_size[d]
        env[f"lsize{d}"] = local_size[d]
        env[f"ngroups{d}"] = -(-global_size[d] // max(1, local_size[d]))
    return env


def element_trace(fn: ir.Function, param: str, order: ExecutionOrder,
                  global_size: tuple[int, int, int], local_size: tuple[int, int, int],
                  values: Mapping[str, int]) -> tuple[list[int], int]:
    """The element indices ``param``'s accesses touch, in the order's sequence, and how many
    work-items the sample ran."""
    fn = indexed(fn, param)
    assert fn.body is not None
    syms = symbols_of(fn)
    skeleton = _skeleton(fn.body, param, syms)
    items = _work_items(order, local_size)
    lanes = 1 if order.kind == SERIAL else max(1, order.lanes)
    trace: list[int] = []
    ran = 0
    try:
        for first in range(0, len(items), lanes):
            chunk = items[first:first + lanes]
            envs = [_environment(lid, global_size, local_size, values) for lid in chunk]
            ran += len(chunk)
            _run(skeleton, envs, trace)
    except _Full:
        pass
    return trace, ran


# ---------------------------------------------------------------- distances


def stack_distances(lines: list[int]) -> tuple[int, int]:
    """The sum of the LRU stack distances of the reuses in ``lines``, and their count."""
    last: dict[int, int] = {}
    times: list[int] = []  # the last-access time of every line seen, ascending
    total = reuses = 0
    for t, line in enumerate(lines):
        prev = last.get(line)
        if prev is not None:
            pos = bisect_left(times, prev)
            total += len(times) - pos - 1  # lines touched more recently than this one
            reuses += 1
            del times[pos]
        times.append(t)
        last[line] = t
    return total, reuses


def _element_size(fn: ir.Function, param: str) -> int:
    decl = next(p for p in fn.params if p.name == param)
    pointee = decl.type.pointee if isinstance(decl.type, PointerType) else None
    fields = struct_fields(pointee) if pointee is not None else None
    if fields is not None:
        pointee = fields[0]  # the trace counts fields, not structs
    size = getattr(pointee, "size", None)
    return int(size) if isinstance(size, int) and size > 0 else 1


def reuse_distance(fn: ir.Function, param: str, order: ExecutionOrder,
                   global_size: tuple[int, int, int], local_size: tuple[int, int, int],
                   values: Mapping[str, int], facts: TransposeFacts | None, transposed: bool,
                   elements: int | None = None) -> ReuseDistance:
    """The reuse distances of ``param``'s accesses in its current layout, or (``transposed``)
    in the layout ``facts`` describe; ``elements`` gives ``R = elements / C``, estimated from
    the largest index of the sample when None."""
    trace, ran = element_trace(fn, param, order, global_size, local_size, values)
    if transposed:
        if facts is None:
            raise ValueError("the transposed layout needs the buffer's TransposeFacts")
        columns = facts.column_count(values)
        if columns is None or columns <= 0:
            raise ValueError(f"the column count of {param} is not known from the arguments")
        rows = elements // columns if elements else -(-(max(trace, default=0) + 1) // columns)
        trace = [(e % columns) * rows + e // columns for e in trace]
    size = _element_size(fn, param)
    lines = [e * size // order.line_bytes for e in trace]
    total, reuses = stack_distances(lines)
    mean = total / reuses if reuses else math.inf
    return ReuseDistance(mean, reuses, len(set(lines)), len(lines), ran)


def better_layout(fn: ir.Function, param: str, order: ExecutionOrder,
                  global_size: tuple[int, int, int], local_size: tuple[int, int, int],
                  values: Mapping[str, int], facts: TransposeFacts,
                  elements: int | None = None) -> tuple[bool, str]:
    """Algorithm 3 for one buffer: whether to transpose it, and why (both distances)."""
    here = reuse_distance(fn, param, order, global_size, local_size, values, facts, False,
                          elements)
    if here.mean == 0:
        return False, f"keep {param}: its layout already has reuse distance 0 ({here.describe()})"
    there = reuse_distance(fn, param, order, global_size, local_size, values, facts, True,
                           elements)
    text = (f"{param} on {order.describe()}: current layout {_mean(here)}, transposed "
            f"{_mean(there)}")
    if there.mean < here.mean:
        return True, f"transpose {text}"
    return False, f"keep {text}"


def _mean(r: ReuseDistance) -> str:
    return "no reuse" if math.isinf(r.mean) else f"{r.mean:.1f}"


__all__ = ["ReuseDistance", "better_layout", "element_trace", "reuse_distance",
           "stack_distances"]
