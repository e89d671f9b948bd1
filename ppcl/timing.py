"""How the benchmarks time a run: warm up until the times settle, then time a fixed number of runs.

A first run pays for work a later one does not (kernel compilation at the first launch, page
faults on fresh buffers, a thread pool starting), and a second run may still be faster than the
third. ``measure`` therefore warms up until two consecutive runs agree within ``agree`` (5%), or
until ``max_warmup`` runs or ``warmup_cap_s`` seconds of warm-up have passed, whichever comes
first, and only then times ``repeats`` runs. It reports the minimum and the median of the timed
runs, and returns the result of the last timed run so that the caller checks an output that was
timed, not only one from the warm-up. ``measure_in_turns`` does the same for several actions
compared with each other, timing them in turns.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

Result = TypeVar("Result")


@dataclass(frozen=True)
class Timing:
    """The times of one measurement, in seconds."""

    times_s: tuple[float, ...]  # the timed runs, in order
    warmup_s: tuple[float, ...]  # the warm-up runs, in order
    settled: bool  # two consecutive warm-up runs agreed within the tolerance

    @property
    def min_s(self) -> float:
        return min(self.times_s)

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)


@dataclass(frozen=True)
class Measurement(Generic[Result]):
    timing: Timing
    result: Result  # what the last timed run returned


def _agree(previous: float, current: float, tolerance: float) -> bool:
    return abs(current - previous) <= tolerance * min(previous, current)


def _warm_up(action: Callable[[], object], agree: float, max_warmup: int,
             warmup_cap_s: float) -> tuple[tuple[float, ...], bool]:
    """The warm-up runs of ``measure``, and whether two consecutive ones agreed."""
    warmup: list[float] = []
    warmup_start = time.perf_counter()
    while len(warmup) < max(max_warmup, 2):
        start = time.perf_counter()
        action()
        warmup.append(time.perf_counter() - start)
        if len(warmup) >= 2 and _agree(warmup[-2], warmup[-1], agree):
            return tuple(warmup), True
        if len(warmup) >= 2 and time.perf_counter() - warmup_start > warmup_cap_s:
            break
    return tuple(warmup), False


def measure(action: Callable[[], Result], repeats: int = 5, agree: float = 0.05,
            max_warmup: int = 10, warmup_cap_s: float = 10.0) -> Measurement[Result]:
    """Warm ``action`` up, then time ``repeats`` runs of it; ``action`` must finish its work
    (wait for its queue) before it returns. At least two warm-up runs are made, so that the
    first timed run is never the one that compiled."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    warmup, settled = _warm_up(action, agree, max_warmup, warmup_cap_s)
    times: list[float] = []
    result: Result | None = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    timing = Timing(times_s=tuple(times), warmup_s=warmup, settled=settled)
    return Measurement(timing=timing, result=result)  # type: ignore[arg-type]


def measure_in_turns(actions: Mapping[str, Callable[[], Result]], repeats: int = 5,
                     agree: float = 0.05, max_warmup: int = 10,
                     warmup_cap_s: float = 10.0, run_length: int = 1,
                     lead_s: float = 0.0) -> dict[str, Measurement[Result]]:
    """Several actions compared: each warmed up as ``measure`` does, then ``repeats`` rounds
    in which every action is timed once, the order rotating from round to round. On a shared
    machine a disturbance then falls on all of them alike, where timing each in its own block
    lets one block catch it all.

    With ``run_length`` n an action's turn times n runs in a row, and with ``lead_s`` they
    follow untimed runs of the same action for at least that many seconds (one run at least),
    as in a program's loop of one call. Use them where the actions run thread pools that stay
    busy after a call: OpenBLAS's workers spin for up to 2^28 cycles before they sleep (the CPU
    device's for 0.2 ms), so a call soon after another library's finds cores still taken and
    times that pool rather than the action; and a pool that went to sleep is slow to wake."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if run_length < 1:
        raise ValueError("run_length must be at least 1")
    warmups = {name: _warm_up(action, agree, max_warmup, warmup_cap_s)
               for name, action in actions.items()}
    names = list(actions)
    times: dict[str, list[float]] = {name: [] for name in names}
    results: dict[str, Result] = {}
    for round_index in range(repeats):
        shift = round_index % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            if lead_s > 0:
                lead_until = time.perf_counter() + lead_s
                actions[name]()
                while time.perf_counter() < lead_until:
                    actions[name]()
            for _ in range(run_length):
                start = time.perf_counter()
                results[name] = actions[name]()
                times[name].append(time.perf_counter() - start)
    return {name: Measurement(timing=Timing(times_s=tuple(times[name]),
                                            warmup_s=warmups[name][0],
                                            settled=warmups[name][1]),
                              result=results[name])
            for name in names}
