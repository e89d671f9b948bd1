"""``ppcl fuzz``: generate programs from consecutive seeds, run each on every target, reduce
every failure to a reproducer written to a folder, and summarize.

Each worker process makes its targets once and compiles into a kernel cache of the campaign's
own (a temporary folder unless ``PPCL_CACHE_DIR`` is set), so thousands of programs leave no
trace in the user's cache. A reproducer ``<kind>-<target>-seed<N>.cl`` starts with a comment
saying how to run it: its seed, mode, launch shape and what went wrong.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ppcl.fuzz.generate import MODES, FuzzProgram, generate
from ppcl.fuzz.reduce import reduce_program
from ppcl.fuzz.run import OUTCOMES, Outcome, Target, pocl_target, ppcl_targets, run_program

_targets: list[Target] = []


@dataclass(frozen=True)
class Job:
    seed: int
    mode: str | None
    reduce: bool


@dataclass(frozen=True)
class Report:
    seed: int
    mode: str
    outcome: Outcome
    reproducer: str = ""  # the reduced program's source, for failures
    lines: tuple[int, int] = (0, 0)  # body lines before and after reduction


def _start_worker(kinds: tuple[str, ...], pocl: bool) -> None:
    global _targets
    _targets = ppcl_targets(kinds)
    if pocl:
        target = pocl_target()
        if target is not None:
            _targets.append(target)


def _run(program: FuzzProgram) -> Outcome:
    return run_program(program, _targets)


def _work(job: Job) -> Report:
    program = generate(job.seed, job.mode)
    outcome = _run(program)
    if not outcome.failed:
        return Report(job.seed, program.mode, outcome)
    reduced = program
    if job.reduce:
        reduced, _ = reduce_program(program, outcome, _run)
    return Report(job.seed, program.mode, outcome, _reproducer(reduced, outcome),
                  (len(program.body), len(reduced.body)))


def _reproducer(program: FuzzProgram, outcome: Outcome) -> str:
    detail = outcome.detail.replace("*/", "* /")
    header = [
        f"/* ppcl fuzz: seed {program.seed}, mode {program.mode}: {outcome.kind} on "
        f"{outcome.target}",
        f"   launch: global size ({program.global_size},), local size "
        f"({program.local_size},); arguments out, in (random uint, the seed's), n = "
        f"{program.global_size}, acc = {{0, 0x5a5a5a5a, 0, 0xffffffff, 0xffffffff, 0}}",
        f"   rerun: ppcl fuzz --seed {program.seed} --count 1 --mode {program.mode}",
        *("   " + line for line in detail.splitlines()[:12]),
        "*/",
    ]
    return "\n".join(header) + "\n" + program.source


def targets_available(pocl: bool) -> list[str]:
    names = ["ppcl-cpu", "ppcl-check"]
    if pocl and pocl_target() is not None:
        names.append("pocl")
    return names


def campaign(first_seed: int, count: int, mode: str | None, jobs: int, reduce: bool,
             pocl: bool, out_dir: Path | None, kinds: tuple[str, ...] = ("cpu", "check"),
             progress: bool = True) -> list[Report]:
    """Run ``count`` programs from ``first_seed``; write each failure's reproducer to
    ``out_dir``; return every failure's report."""
    work = [Job(seed, mode, reduce) for seed in range(first_seed, first_seed + count)]
    failures: list[Report] = []
    counts: Counter[str] = Counter()
    started = time.perf_counter()
    results: Iterator[Report]
    if jobs <= 1:
        _start_worker(kinds, pocl)
        results = map(_work, work)
        pool = None
    else:
        pool = multiprocessing.get_context("spawn").Pool(jobs, _start_worker, (kinds, pocl))
        results = pool.imap_unordered(_work, work, chunksize=4)
    try:
        for done, report in enumerate(results, 1):
            counts[report.outcome.kind] += 1
            if report.outcome.failed:
                failures.append(report)
                if out_dir is not None:
                    out_dir.mkdir(parents=True, exist_ok=True)
                    name = f"{report.outcome.kind}-{report.outcome.target}-seed{report.seed}.cl"
                    (out_dir / name).write_text(report.reproducer, encoding="utf-8")
                if progress:
                    print(f"seed {report.seed} ({report.mode}): {report.outcome.kind} on "
                          f"{report.outcome.target}; reduced {report.lines[0]} -> "
                          f"{report.lines[1]} lines", file=sys.stderr)
            if progress and (done % 100 == 0 or done == count):
                rate = done / max(time.perf_counter() - started, 1e-9)
                print(f"\r{done}/{count} programs, {rate:.1f}/s, "
                      f"{sum(counts[k] for k in OUTCOMES if k != 'ok')} failing",
                      end="\n" if done == count else "", file=sys.stderr)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ppcl fuzz",
        description="Generate random OpenCL C kernels free of undefined behaviour, run them "
                    "on ppcl's CPU device, its checking device and pocl (when installed), "
                    "and reduce every mismatch, crash or build failure to a reproducer.")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=100, help="programs to try (default 100)")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="generate only this mode (default: the seed picks)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                        help="folder for reproducers (default ./fuzz-failures)")
    parser.add_argument("--no-reduce", action="store_true", help="keep failing programs whole")
    parser.add_argument("--no-pocl", action="store_true", help="leave pocl out")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="write a summary to FILE")
    args = parser.parse_args(argv)
    if args.count < 1 or args.jobs < 1:
        parser.error("--count and --jobs must be at least 1")
    temporary = None
    if "PPCL_CACHE_DIR" not in os.environ:  # workers inherit it; read once by each
        temporary = tempfile.TemporaryDirectory(prefix="ppcl-fuzz-cache-")
        os.environ["PPCL_CACHE_DIR"] = temporary.name
    try:
        names = targets_available(not args.no_pocl)
        print(f"ppcl fuzz: seeds {args.seed}..{args.seed + args.count - 1} on "
              f"{', '.join(names)}", file=sys.stderr)
        started = time.perf_counter()
        failures = campaign(args.seed, args.count, args.mode, args.jobs, not args.no_reduce,
                            not args.no_pocl, args.out)
        seconds = time.perf_counter() - started
    finally:
        if temporary is not None:
            os.environ.pop("PPCL_CACHE_DIR", None)
            temporary.cleanup()
    kinds = Counter(f"{r.outcome.kind} on {r.outcome.target}" for r in failures)
    print(f"{args.count} programs in {seconds:.0f} s on {', '.join(names)}: "
          f"{len(failures)} failing" + "".join(f"; {n} {k}" for k, n in kinds.items()))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "programs": args.count, "first_seed": args.seed, "seconds": seconds,
            "targets": names,
            "failures": [{"seed": r.seed, "mode": r.mode, "kind": r.outcome.kind,
                          "target": r.outcome.target, "detail": r.outcome.detail[:2000],
                          "lines": list(r.lines)} for r in failures]}, indent=2) + "\n",
            encoding="utf-8")
    return 1 if failures else 0
