"""Multi-core scaling of the CPU device: every kernel of the suite with ``PPCL_THREADS=1`` and with
all cores, each in a fresh process (the thread count is read once).

Compute-bound kernels (rated in GFLOP/s, or with no limit) are judged by their speedup over one
thread; memory-bound kernels (GB/s) by their bandwidth as a fraction of a threaded ``np.copyto``
measured in the same run on as many threads. ``--suite programs`` measures the second suite
(``benchmarks.programs``, ppcl only) the same way: its programs declare no rates, so each is
given its speedup over one thread and its median times alone. Usage::

    python3 -m benchmarks.scaling [--suite kernels|programs] [--size default|small]
                                  [--only a,b] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any


def _suite(threads: str | None, size: str, only: str | None,
           module: str = "benchmarks") -> dict[str, Any]:
    """The JSON report of ``python3 -m module`` run in a fresh process with ``PPCL_THREADS`` set
    to ``threads`` (None: the default, every usable core)."""
    env = dict(os.environ)
    env.pop("PPCL_THREADS", None)
    if threads is not None:
        env["PPCL_THREADS"] = threads
    with tempfile.TemporaryDirectory(prefix="ppcl-scaling-") as directory:
        path = os.path.join(directory, "run.json")
        argv = [sys.executable, "-m", module, "--size", size, "--json", path]
        argv += ["--no-pocl"] if module == "benchmarks.programs" else []
        argv += ["--only", only] if only else []
        # the second suite exits 1 when a result is wrong: its report says which, and the row
        # of that program says so
        subprocess.run(argv, env=env, check=module == "benchmarks", stdout=subprocess.DEVNULL)
        with open(path, encoding="utf-8") as f:
            report: dict[str, Any] = json.load(f)
    return report


def _ppcl_median(kernel: dict[str, Any]) -> float | None:
    result = kernel["results"].get("ppcl")
    if not result or result.get("median_s") is None or result.get("error"):
        return None
    return float(result["median_s"])


def _write_json(path: str, report: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")


def _program_median(program: dict[str, Any]) -> float | None:
    result = program["results"].get("ppcl")
    if not result or not result.get("ok") or result.get("median_s") is None:
        return None
    return float(result["median_s"])


def programs(size: str, only: str | None, json_path: str | None) -> int:
    """The second suite with one thread and with every core: speedup per program."""
    one = _suite("1", size, only, "benchmarks.programs")
    every = _suite(None, size, only, "benchmarks.programs")
    threads = len(os.sched_getaffinity(0))
    print(f"second suite, ppcl alone, 1 thread against {threads} (medians)")
    print(f"{'program':<16}{'1 thread ms':>13}{f'{threads} threads ms':>15}{'speedup':>9}")
    rows = []
    for single, full in zip(one["programs"], every["programs"]):
        t1, tn = _program_median(single), _program_median(full)
        if t1 is None or tn is None:
            print(f"{full['name']:<16} (no result or a wrong one)")
            continue
        rows.append({"name": full["name"], "one_thread_s": t1, "all_threads_s": tn,
                     "speedup": t1 / tn})
        print(f"{full['name']:<16}{t1 * 1e3:>13.2f}{tn * 1e3:>15.2f}{t1 / tn:>8.1f}x")
    if json_path:
        _write_json(json_path, {"threads": threads, "programs": rows})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("kernels", "programs"), default="kernels")
    parser.add_argument("--size", choices=("small", "default"), default="default")
    parser.add_argument("--only", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.suite == "programs":
        return programs(args.size, args.only, args.json)

    one = _suite("1", args.size, args.only)
    every = _suite(None, args.size, args.only)
    threads = int(every["limits"]["copy_threads"])
    copy_gbps = float(every["limits"]["threaded_copy_GBps"])
    print(f"{threads} threads; threaded np.copyto {copy_gbps:.1f} GB/s on {threads} threads")
    print(f"{'kernel':<16}{'1 thread ms':>13}{f'{threads} threads ms':>15}{'speedup':>9}"
          f"{'of copy':>9}  bound")
    rows = []
    for single, full in zip(one["kernels"], every["kernels"]):
        t1, tn = _ppcl_median(single), _ppcl_median(full)
        if t1 is None or tn is None:
            print(f"{full['name']:<16} (no result)")
            continue
        memory = full["bound"] == "memory"
        of_copy = full["bytes"] / tn / 1e9 / copy_gbps if memory and full["bytes"] else None
        rows.append({"name": full["name"], "one_thread_s": t1, "all_threads_s": tn,
                     "speedup": t1 / tn, "of_threaded_copy": of_copy,
                     "bound": "memory" if memory else "compute"})
        share = f"{100 * of_copy:.0f}%" if of_copy is not None else "-"
        print(f"{full['name']:<16}{t1 * 1e3:>13.2f}{tn * 1e3:>15.2f}{t1 / tn:>8.1f}x"
              f"{share:>9}  {rows[-1]['bound']}")
    if args.json:
        _write_json(args.json, {"threads": threads, "threaded_copy_GBps": copy_gbps,
                                "kernels": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
