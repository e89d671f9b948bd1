"""Host fusion off and on, in the same run, on the GPU-style programs of ``benchmarks/gpu_style``
(issue 15), on ppcl's CPU device, beside numpy and pocl.

Columns: ``off`` is a queue with ``ppcl.hostfusion.disable``, ``on`` a queue of the same context
with ``ppcl.hostfusion.enable``; each program is built and its buffers made for each queue, as a
program would. After a few runs that let host fusion try and settle its rewrites, each column
is warmed up until two runs agree and then timed ``--repeat`` times, the columns in turns
(``ppcl.timing.measure_in_turns``: on a shared machine a disturbance falls on all alike). ``numpy`` times the program's float64 numpy reference,
``pocl`` the same host function through pyopencl (``OCL_ICD_VENDORS=/etc/OpenCL/vendors``;
skipped with a message when absent). Times are wall-clock around the host function: copies in,
launches, reads back. Every result is checked against the reference.

Ratios are median over median: off/on (host fusion's speedup), pocl/on and numpy/on; the
summary is the geometric mean of off/on and the programs below 0.95x (the issue's acceptance:
>= 1.5x geometric mean, none below 0.95x). off/on of the minimums is shown beside it: on a
shared machine the minimum is the time least disturbed by others.

    python3 -m benchmarks.hostfusion [--quick] [--only NAME[,NAME]] [--repeat N] [--no-pocl]
                                     [--size small|quick|default] [--json FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ppcl
import ppcl.hostfusion
from benchmarks.gpu_style import BY_NAME, PROGRAMS
from benchmarks.names import pick_names
from benchmarks.programs.program import Data, Program, Result, Size, compare, describe_size
from benchmarks.programs.runner import (
    Device,
    Outcome,
    ms,
    open_pocl,
    open_ppcl,
    print_failures,
    status,
)
from ppcl.bench import geometric_mean
from ppcl.timing import measure, measure_in_turns

SLOW_RATIO = 0.95  # the bound for any one program
SETTLE_RUNS = 3  # runs before measuring, in which host fusion may try its rewrites


def open_columns(with_pocl: bool, notices: list[str]) -> list[Device]:
    """The off and on queues on ppcl's CPU device, and pocl when asked and present."""
    off = open_ppcl()
    ppcl.hostfusion.disable(off.queue)  # off even when PPCL_HOSTFUSION=1 is set
    on_queue = ppcl.CommandQueue(off.ctx)
    ppcl.hostfusion.enable(on_queue)
    devices = [Device("off", ppcl, off.ctx, off.queue, off.description),
               Device("on", ppcl, off.ctx, on_queue, off.description + ", host fusion on")]
    pocl = open_pocl(notices) if with_pocl else None
    if pocl is not None:
        devices.append(pocl)
    return devices


def _failure(error: Exception) -> Outcome:
    detail = traceback.format_exception_only(type(error), error)[-1].strip()
    return Outcome(ok=False, error=f"error: {detail}")


def run_numpy(program: Program, size: Size, inputs: dict[str, np.ndarray],
              repeats: int) -> tuple[Outcome, Result]:
    """The reference timed (a few runs: it has nothing to warm up but caches, and some
    references take a second), and its result."""
    measurement = measure(lambda: program.reference(size, inputs), repeats=min(repeats, 3),
                          max_warmup=2, warmup_cap_s=2.0)
    timing = measurement.timing
    return (Outcome(ok=True, min_s=timing.min_s, median_s=timing.median_s,
                    times_s=list(timing.times_s), warmup_s=list(timing.warmup_s),
                    settled=timing.settled), measurement.result)


def settle_host_fusion(action: Callable[[], Result], limit_s: float = 60.0) -> None:
    """Run the program until host fusion has built and timed the candidates of every launch
    shape it has seen, and chosen (their builds, a compile each, run in the background and may
    outlast a few runs of a short program): the timed runs then run what a long-running
    program would."""
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        ppcl.hostfusion.wait_for_builds()
        if all(d.trial is None or d.trial.choice is not None
               for d in ppcl.hostfusion.decisions()):
            return
        action()


def run_columns(program: Program, size: Size, inputs: dict[str, np.ndarray],
                expected: Result, devices: list[Device], repeats: int) -> dict[str, Outcome]:
    """``program`` built and its buffers made on every device, run ``SETTLE_RUNS`` times (on
    the host fusion queue, then until host fusion has chosen: ``settle_host_fusion``), then
    timed in turns; the last timed result of each checked against ``expected``."""
    outcomes: dict[str, Outcome] = {}
    actions: dict[str, Callable[[], Result]] = {}
    for device in devices:
        try:
            data = Data(device.cl, device.ctx, program, size, inputs)
            action = functools.partial(program.run, device.cl, device.ctx, device.queue, data)
            for _ in range(SETTLE_RUNS):
                action()
            if device.queue is not None and getattr(device.queue, "_hostfusion", None):
                settle_host_fusion(action)
            actions[device.label] = action
        except Exception as error:
            outcomes[device.label] = _failure(error)
    try:
        measurements = measure_in_turns(actions, repeats=repeats)
    except Exception as error:
        return {**outcomes, **{label: _failure(error) for label in actions}}
    for label, measurement in measurements.items():
        timing = measurement.timing
        mismatch = compare(program, measurement.result, expected)
        outcomes[label] = Outcome(ok=mismatch is None, error=mismatch, min_s=timing.min_s,
                                  median_s=timing.median_s, times_s=list(timing.times_s),
                                  warmup_s=list(timing.warmup_s), settled=timing.settled)
    return {device.label: outcomes[device.label] for device in devices}


def ratio(outcomes: dict[str, Outcome], slower: str, faster: str = "on",
          statistic: str = "median_s") -> float | None:
    """``slower``'s median (or ``statistic``) time over ``faster``'s, when both ran
    correctly."""
    a, b = outcomes.get(slower), outcomes.get(faster)
    if a is None or b is None or not (a.ok and b.ok):
        return None
    return float(getattr(a, statistic)) / float(getattr(b, statistic))


def measure_program(program: Program, size: Size, devices: list[Device],
                    repeats: int) -> dict[str, Any]:
    inputs = program.make_inputs(size)
    numpy_outcome, expected = run_numpy(program, size, inputs, repeats)
    outcomes = run_columns(program, size, inputs, expected, devices, repeats)
    outcomes["numpy"] = numpy_outcome
    return {"name": program.name, "summary": program.summary, "size": describe_size(size),
            "outcomes": outcomes, "off/on": ratio(outcomes, "off"),
            "off/on min": ratio(outcomes, "off", statistic="min_s"),
            "pocl/on": ratio(outcomes, "pocl"), "numpy/on": ratio(outcomes, "numpy")}


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def print_table(rows: list[dict[str, Any]], labels: list[str]) -> None:
    header = ["program"]
    for label in labels:
        header += [f"{label} min", f"{label} med"]
    header += ["off/on", "(min)", "pocl/on", "numpy/on", "correct"]
    lines = [header]
    for row in rows:
        line = [row["name"]]
        for label in labels:
            outcome = row["outcomes"].get(label)
            line += [ms(outcome.min_s), ms(outcome.median_s)] if outcome else ["-", "-"]
        line += [_x(row["off/on"]), _x(row["off/on min"]), _x(row["pocl/on"]),
                 _x(row["numpy/on"]),
                 status(row["outcomes"])]
        lines.append(line)
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    print("times in ms; ratios are median over median, (min) is off/on of the minimums")
    for line in lines:
        print("  ".join(cell.ljust(width) if column == 0 else cell.rjust(width)
                        for column, (cell, width) in enumerate(zip(line, widths))).rstrip())


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.hostfusion",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the quick sizes and three timed runs")
    parser.add_argument("--size", choices=["small", "quick", "default"], default=None,
                        help="program sizes (default: default, or quick with --quick)")
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs of each column, in turns (default 10, 3 with --quick)")
    parser.add_argument("--no-pocl", action="store_true", help="leave the pocl column out")
    parser.add_argument("--json", default=None, metavar="FILE", help="write every number here")
    args = parser.parse_args(argv)
    args.size = args.size or ("quick" if args.quick else "default")
    args.repeat = args.repeat if args.repeat is not None else (3 if args.quick else 10)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = pick_names(args.only, [p.name for p in PROGRAMS])
    if names is None:
        return 2
    if args.repeat < 1:
        print("--repeat must be at least 1", file=sys.stderr)
        return 2

    notices: list[str] = []
    devices = open_columns(not args.no_pocl, notices)
    for device in devices:
        print(f"{device.label}: {device.description}")
    for notice in notices:
        print(notice)
    labels = [device.label for device in devices] + ["numpy"]

    rows = []
    start = time.perf_counter()
    for name in names:
        program = BY_NAME[name]
        row = measure_program(program, program.sizes[args.size], devices, args.repeat)
        rows.append(row)
        times = "  ".join(f"{label} {ms(outcome.median_s)}" for label, outcome in
                          row["outcomes"].items())
        print(f"{name:<14} {row['size']:<40} {times} ms  off/on {_x(row['off/on'])}  "
              f"{status(row['outcomes'])}", flush=True)
        print_failures(row["outcomes"])

    print()
    print_table(rows, labels)
    speedups = [row["off/on"] for row in rows if row["off/on"] is not None]
    mean = geometric_mean(speedups)
    slow = [row["name"] for row in rows
            if row["off/on"] is not None and row["off/on"] < SLOW_RATIO]
    if mean is not None:
        print(f"\ngeometric mean of off/on: {mean:.2f}x over {len(speedups)} programs; below "
              f"{SLOW_RATIO}x: {', '.join(slow) if slow else 'none'}")
    for column in ("off/on min", "pocl/on", "numpy/on"):
        values = [row[column] for row in rows if row[column] is not None]
        if values:
            print(f"geometric mean of {column}: {geometric_mean(values):.2f}x")
    print(f"({time.perf_counter() - start:.0f} s)")
    failed = [row["name"] for row in rows if status(row["outcomes"]) != "ok"]
    if failed:
        print(f"\nresults differing from numpy or errors: {', '.join(failed)}")

    if args.json:
        report = {
            "size": args.size, "repeat": args.repeat,
            "notices": notices,
            "devices": {device.label: device.description for device in devices},
            "geomean_off_on": mean, "below_0_95": slow,
            "programs": [{**{key: value for key, value in row.items() if key != "outcomes"},
                          "results": {label: vars(outcome)
                                      for label, outcome in row["outcomes"].items()}}
                         for row in rows],
        }
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
