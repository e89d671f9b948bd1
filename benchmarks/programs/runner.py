"""Run the second suite on ppcl and, in the same process, on pocl through pyopencl.

For each program: make its inputs (seeded), compute the numpy reference once, then on each
device build the program, create its buffers and time its host function with
``ppcl.timing.measure`` (warm-up until two runs agree within 5%, then ``--repeats`` timed
runs). The result of the last timed run is checked against the reference. Times are wall-clock
around the host function, which includes its launches, the copies it makes and the reads of its
results, on both devices alike.

The pocl column is skipped, with a message, when pyopencl cannot be imported or finds no pocl
platform. ``OCL_ICD_VENDORS`` defaults to ``/etc/OpenCL/vendors`` (where Debian's
``pocl-opencl-icd`` registers itself) and is set before pyopencl is imported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.names import pick_names
from benchmarks.programs import BY_NAME, PROGRAMS
from benchmarks.programs.program import Data, Program, Result, compare, describe_size
from ppcl.bench import geometric_mean
from ppcl.timing import measure

POCL_PLATFORM = "Portable Computing Language"
SYSTEM_ICD_VENDORS = "/etc/OpenCL/vendors"
SLOW_RATIO = 0.9


@dataclass
class Device:
    """A PyOpenCL-style module with a context and an in-order queue on one device."""

    label: str
    cl: Any
    ctx: Any
    queue: Any
    description: str


@dataclass
class Outcome:
    """One program on one device."""

    ok: bool
    error: str | None = None
    min_s: float | None = None
    median_s: float | None = None
    times_s: list[float] = field(default_factory=list)
    warmup_s: list[float] = field(default_factory=list)
    settled: bool = False


def _cpu_device(cl: Any, platform: Any) -> Any:
    try:
        devices = platform.get_devices(device_type=cl.device_type.CPU)
    except Exception:  # some ICDs raise DEVICE_NOT_FOUND instead of returning []
        devices = []
    return devices[0] if devices else platform.get_devices()[0]


def _open(label: str, cl: Any, platform: Any) -> Device:
    device = _cpu_device(cl, platform)
    ctx = cl.Context([device])
    return Device(label, cl, ctx, cl.CommandQueue(ctx),
                  f"{platform.name} / {device.name}")


def open_ppcl() -> Device:
    import ppcl

    return _open("ppcl", ppcl, ppcl.get_platforms()[0])


def open_pocl(notices: list[str]) -> Device | None:
    """pocl through pyopencl, or None with the reason in ``notices``."""
    os.environ.setdefault("OCL_ICD_VENDORS", SYSTEM_ICD_VENDORS)
    try:
        import pyopencl
    except ImportError as error:
        notices.append(f"pocl column skipped: pyopencl cannot be imported ({error})")
        return None
    try:
        platforms = [p for p in pyopencl.get_platforms() if POCL_PLATFORM in p.name]
    except Exception as error:  # no ICD at all raises PLATFORM_NOT_FOUND_KHR
        notices.append(f"pocl column skipped: pyopencl finds no platform ({error})")
        return None
    if not platforms:
        notices.append("pocl column skipped: pyopencl finds no pocl platform (is "
                       "OCL_ICD_VENDORS pointing at pocl's .icd file?)")
        return None
    return _open("pocl", pyopencl, platforms[0])


def run_on(device: Device, program: Program, size: Any, inputs: Any, expected: Result,
           repeats: int) -> Outcome:
    try:
        data = Data(device.cl, device.ctx, program, size, inputs)
        measurement = measure(
            lambda: program.run(device.cl, device.ctx, device.queue, data), repeats=repeats)
    except Exception as error:
        detail = traceback.format_exception_only(type(error), error)[-1].strip()
        return Outcome(ok=False, error=f"error: {detail}")
    timing = measurement.timing
    mismatch = compare(program, measurement.result, expected)
    return Outcome(ok=mismatch is None, error=mismatch, min_s=timing.min_s,
                   median_s=timing.median_s, times_s=list(timing.times_s),
                   warmup_s=list(timing.warmup_s), settled=timing.settled)


def speedup(outcomes: dict[str, Outcome]) -> float | None:
    """pocl's median time over ppcl's, when both ran correctly."""
    ppcl, pocl = outcomes.get("ppcl"), outcomes.get("pocl")
    if ppcl is None or pocl is None or not (ppcl.ok and pocl.ok):
        return None
    assert ppcl.median_s is not None and pocl.median_s is not None
    return pocl.median_s / ppcl.median_s


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def status(outcomes: dict[str, Outcome]) -> str:
    failures = [f"{label} FAIL" for label, outcome in outcomes.items() if not outcome.ok]
    return ", ".join(failures) if failures else "ok"


def print_failures(outcomes: dict[str, Outcome]) -> None:
    """One line for each device whose run failed, with what went wrong."""
    for label, outcome in outcomes.items():
        if not outcome.ok:
            print(f"    {label}: {outcome.error}", flush=True)


def print_table(rows: list[dict[str, Any]], labels: list[str]) -> None:
    header = ["program", "size"]
    for label in labels:
        header += [f"{label} min ms", f"{label} median ms"]
    header += ["speedup", "correct"]
    lines = [header]
    for row in rows:
        outcomes: dict[str, Outcome] = row["outcomes"]
        line = [row["name"], row["size"]]
        for label in labels:
            outcome = outcomes[label]
            line += [ms(outcome.min_s), ms(outcome.median_s)]
        ratio = row["speedup"]
        line += ["-" if ratio is None else f"{ratio:.2f}x", status(outcomes)]
        lines.append(line)
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(width) if column < 2 else cell.rjust(width)
                        for column, (cell, width) in enumerate(zip(line, widths))).rstrip())


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.programs",
                                     description="GPU-style OpenCL programs on ppcl and pocl")
    parser.add_argument("--size", choices=["small", "default"], default="default")
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--json", default=None, metavar="FILE", help="write every number here")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after the warm-up")
    parser.add_argument("--no-pocl", action="store_true", help="run on ppcl only")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = pick_names(args.only, [p.name for p in PROGRAMS])
    if names is None:
        return 2
    if args.repeats < 1:
        print("--repeats must be at least 1", file=sys.stderr)
        return 2

    notices: list[str] = []
    devices = [open_ppcl()]
    pocl = None if args.no_pocl else open_pocl(notices)
    if pocl is not None:
        devices.append(pocl)
    for device in devices:
        print(f"{device.label}: {device.description}")
    for notice in notices:
        print(notice)
    labels = [device.label for device in devices]

    rows: list[dict[str, Any]] = []
    for name in names:
        program = BY_NAME[name]
        size = program.sizes[args.size]
        inputs = program.make_inputs(size)
        start = time.perf_counter()
        expected = program.reference(size, inputs)
        reference_s = time.perf_counter() - start
        outcomes = {device.label: run_on(device, program, size, inputs, expected, args.repeats)
                    for device in devices}
        row = {"name": name, "summary": program.summary, "size": describe_size(size),
               "reference_s": reference_s, "outcomes": outcomes, "speedup": speedup(outcomes)}
        rows.append(row)
        times = "  ".join(f"{label} {ms(outcome.median_s)} ms" for label, outcome in
                          outcomes.items())
        print(f"{name:<14} {times}  {status(outcomes)}", flush=True)
        print_failures(outcomes)

    print()
    print_table(rows, labels)
    ratios = [row["speedup"] for row in rows if row["speedup"] is not None]
    mean = geometric_mean(ratios)
    slow = [row["name"] for row in rows
            if row["speedup"] is not None and row["speedup"] < SLOW_RATIO]
    if mean is not None:
        print(f"\ngeometric mean speedup (pocl median / ppcl median): {mean:.2f}x over "
              f"{len(ratios)} programs")
        print(f"programs below {SLOW_RATIO}x: {len(slow)}" + (f" ({', '.join(slow)})" if slow
                                                              else ""))
    failed = [row["name"] for row in rows if status(row["outcomes"]) != "ok"]
    if failed:
        print(f"\nresults differing from numpy or errors: {', '.join(failed)}")

    if args.json:
        report = {
            "size": args.size, "repeats": args.repeats, "notices": notices,
            "devices": {device.label: device.description for device in devices},
            "geomean_speedup": mean, "below_0_9": slow,
            "programs": [{**{key: value for key, value in row.items() if key != "outcomes"},
                          "results": {label: vars(outcome)
                                      for label, outcome in row["outcomes"].items()}}
                         for row in rows],
        }
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)
    return 1 if failed else 0
