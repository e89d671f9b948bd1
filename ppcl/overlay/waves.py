"""Parallel replay: which steps of a plan may run at once, and whether running them so pays.

A step's :class:`Footprint` is what it touches: the byte ranges of root buffers it reads and
writes (a kernel's pointer arguments bound to buffers or sub-buffers, read or written as the
kernel's static sets in ``compiler/analysis/buffers.py`` say; a transfer's ranges), whether it
moves bytes to or from host memory, and the recorded events it waits on. Two steps *conflict*
(:func:`conflict`) when one writes bytes the other reads or writes (read after write, write
after read, write after write, sub-buffer ranges compared by their bytes in the root buffer),
when both move host memory (two host arrays may be views of the same bytes, and the plan is
reused for later recordings with other arrays), or when one waits on the other's event.

:func:`waves` cuts the steps, in queue order, into waves of consecutive steps no two of which
conflict: a new wave starts at the first step that conflicts with one of the current wave.
Running a wave's steps at once and the waves one after another keeps every dependency, and the
events of a wave still complete in queue order when its last step is done.

:func:`concurrency` says, from properties of the device and the wave, whether its steps should
run at once: they should when the device runs launches from several threads at once (its
thread count is above one) and no kernel of the wave fills the device alone (its work-group
count is below the thread count: the CPU device runs a launch's groups across its threads,
so a launch of fewer groups leaves threads idle), or when transfers can copy while a single
kernel runs. Whether it then pays (the time it would save against the cost of handing steps to
other threads) is measured on every replay, see ``recorder.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ppcl.devices.interface import BufferArg
from ppcl.overlay.graph import Command, Numbering
from ppcl.runtime.queue import KernelTask


@dataclass(frozen=True)
class Span:
    """Bytes ``[start, end)`` of root buffer ``buffer``, written or only read."""

    buffer: int
    start: int
    end: int
    writes: bool


@dataclass(frozen=True)
class Footprint:
    """What one step touches (see the module docstring)."""

    spans: tuple[Span, ...]
    host: bool  # moves bytes to or from a host array
    events: frozenset[int]  # ids of its commands' events
    waits: frozenset[int]  # ids of the events its commands wait on
    groups: int | None  # a kernel step's work-group count; None for a transfer
    runs: bool  # False for a step that does nothing (a removed task)


@dataclass
class Wave:
    """Steps (indices into a plan's steps) that may run at once; ``concurrent`` when they
    should, by :func:`concurrency`, with its reason. ``pays`` is decided after every replay
    from the steps' times (``fastest``: each running step's time in the last replay, ``timed``:
    how many replays were timed); until decided the steps run one after another."""

    steps: list[int]
    concurrent: bool
    reason: str
    pays: bool | None = None
    threads: int = 1  # the device's threads: at most this many steps run at once
    fastest: list[int] = field(default_factory=list)
    timed: int = 0


def footprint(members: Sequence[int], commands: Sequence[Command], numbers: Numbering,
              accesses_of: Callable[[Any], tuple[Sequence[Any], dict[str, Any]]],
              runs: bool) -> Footprint:
    """The footprint of a step standing for ``members``; ``accesses_of(kernel)`` gives a
    kernel's parameters and its accesses by parameter name."""
    spans: list[Span] = []
    host = False
    groups: int | None = None
    for member in members:
        task = commands[member].task
        if isinstance(task, KernelTask):
            groups = task.launch.ndrange.group_count
            params, accesses = accesses_of(task.kernel)
            for param, arg in zip(params, task.args):
                if not isinstance(arg, BufferArg) or arg.owner is None:
                    continue
                access = accesses.get(param.name)
                number = numbers.buffer(arg.owner)
                start = arg.owner.offset
                end = start + arg.owner.size
                if access is None or access.writes:  # unanalysed: read and written
                    spans.append(Span(number, start, end, True))
                else:
                    spans.append(Span(number, start, end, False))
        else:
            host = host or task.host is not None
            for mem, offset, size in task.reads:
                start = mem.offset + offset
                spans.append(Span(numbers.buffer(mem), start, start + size, False))
            for mem, offset, size in task.writes:
                start = mem.offset + offset
                spans.append(Span(numbers.buffer(mem), start, start + size, True))
    return Footprint(tuple(spans), host,
                     frozenset(id(commands[m].event) for m in members),
                     frozenset(id(e) for m in members for e in commands[m].waits),
                     groups, runs)


def conflict(earlier: Footprint, later: Footprint) -> str:
    """Why ``later`` must run after ``earlier`` ("" when they may run at once)."""
    if not earlier.runs or not later.runs:
        return ""
    if earlier.events & later.waits:
        return "waits on its event"
    if earlier.host and later.host:
        return "both move host memory"
    for a in earlier.spans:
        for b in later.spans:
            if a.buffer != b.buffer or a.end <= b.start or b.end <= a.start:
                continue
            if a.writes and not b.writes:
                return f"reads bytes of buffer {a.buffer} it writes (raw)"
            if b.writes and not a.writes:
                return f"writes bytes of buffer {a.buffer} it reads (war)"
            if a.writes and b.writes:
                return f"writes bytes of buffer {a.buffer} it writes (waw)"
    return ""


def waves(prints: Sequence[Footprint]) -> list[list[int]]:
    """The steps cut into waves of consecutive, pairwise independent steps, in queue order."""
    result: list[list[int]] = []
    current: list[int] = []
    for i, later in enumerate(prints):
        if any(conflict(prints[j], later) for j in current):
            result.append(current)
            current = []
        current.append(i)
    if current:
        result.append(current)
    return result


def concurrency(prints: Sequence[Footprint], labels: Sequence[str],
                threads: int) -> tuple[bool, str]:
    """Whether the steps of one wave should run at once on a device of ``threads`` threads
    that runs launches from several threads at once (``threads`` 1 for one that does not),
    and why."""
    running = [(p, label) for p, label in zip(prints, labels) if p.runs]
    if len(running) < 2:
        return False, "one task"
    if threads < 2:
        return False, "the device does not run launches at once"
    kernels = [(p, label) for p, label in running if p.groups is not None]
    transfers = len(running) - len(kernels)
    filling = [(p, label) for p, label in kernels if p.groups is not None and p.groups >= threads]
    if not filling:
        groups = ", ".join(f"{label}: {p.groups}" for p, label in kernels)
        return True, (f"{len(running)} independent tasks, none fills the device's {threads} "
                      f"threads alone (work-groups {groups or 'none'})")
    if transfers and len(filling) == 1 and len(kernels) == 1:
        return True, f"{transfers} transfer(s) copy while {filling[0][1]} runs"
    p, label = filling[0]
    return False, f"{label} fills the device's {threads} threads alone ({p.groups} work-groups)"
