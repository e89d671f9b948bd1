"""Both benchmark suites on ppcl with input space splitting and without, in one process.

``python3 -m benchmarks.split_suites [--size small|default] [--rounds N] [--repeats N]
[--only a,b]`` runs every kernel of ``ppcl bench`` and every program of the second suite
(``benchmarks.programs``) on two ppcl contexts of the same device: one builds as usual, the
other with ``-ppcl-no-split`` added to every build. The two take turns for ``--rounds`` rounds,
each round timing ``--repeats`` runs after a warm-up, and each row prints the median over
rounds of each side's median, and ``no split / split`` from those (above 1: splitting is
faster) and from the minima. Rows below ``SLOWER`` by both ratios are listed at the end: the
splitting issue asks that no kernel of either suite be slower with splitting beyond noise.
Results are checked against numpy on both sides.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

SLOWER = 0.95  # below this by both ratios: slower beyond the noise of these machines


def no_split_module() -> types.ModuleType:
    """``ppcl`` with ``Program.build`` adding ``-ppcl-no-split`` to the options."""
    import ppcl

    class NoSplitProgram(ppcl.Program):  # type: ignore[misc, name-defined]
        def build(self, options: str | Sequence[str] | None = None,  # type: ignore[override]
                  devices: Any = None, cache_dir: str | None = None) -> Any:
            if options is None:
                extra: list[str] = []
            elif isinstance(options, str):
                extra = [options]
            else:
                extra = list(options)
            return super().build(" ".join(extra + ["-ppcl-no-split"]), devices, cache_dir)

    module = types.ModuleType("ppcl_no_split")
    module.__dict__.update({k: v for k, v in vars(ppcl).items() if not k.startswith("__")})
    module.Program = NoSplitProgram  # type: ignore[attr-defined]
    return module


def split_kernels(program: Any) -> list[str]:
    """The kernels of a built ppcl ``program`` whose code, as compiled for the launches run so
    far, has a split loop (a kernel without one is the same code on both sides, so its ratio
    shows the noise)."""
    names: set[str] = set()
    for device_program in getattr(program, "_device_programs", {}).values():
        for compiled in list(getattr(device_program, "_compiled", {}).values()):
            if "__L->unsplit" in compiled.c_source:
                names.add(compiled.name)
    return sorted(names)


def _rounds(pair: dict[str, Callable[[], tuple[float, float]]], rounds: int
            ) -> dict[str, tuple[float, float]]:
    """Each side's (median of its round medians, smallest minimum), the sides taking turns."""
    medians: dict[str, list[float]] = {k: [] for k in pair}
    minima: dict[str, list[float]] = {k: [] for k in pair}
    for _ in range(rounds):
        for side, run in pair.items():
            med, low = run()
            medians[side].append(med)
            minima[side].append(low)
    return {k: (statistics.median(medians[k]), min(minima[k])) for k in pair}


def own_suite(size: str, names: list[str], rounds: int, repeats: int) -> list[dict[str, Any]]:
    import ppcl
    from ppcl import bench
    from ppcl.bench_kernels import make_case

    device = ppcl.get_platforms()[0].get_devices()[0]
    sides = {"split": bench.Backend("split", ppcl, device),
             "no split": bench.Backend("no split", no_split_module(), device)}
    for backend in sides.values():
        backend.build()
    limits = {"copy_GBps": 1.0, "sgemm_GFLOPs": 1.0}
    rng = np.random.default_rng(12345)
    rows = []
    for name in names:
        case = make_case(name, size, rng)
        errors: list[str] = []

        def runner(backend: bench.Backend, case: Any = case,
                   errors: list[str] = errors) -> Callable[[], tuple[float, float]]:
            def run() -> tuple[float, float]:
                result = bench.run_case(backend, case, repeats, limits)
                if not result.ok:
                    errors.append(f"{backend.label}: {result.error}")
                    return float("nan"), float("nan")
                return statistics.median(result.times_s), min(result.times_s)
            return run

        times = _rounds({k: runner(b) for k, b in sides.items()}, rounds)
        kernels = {launch.kernel for launch in case.launches}
        split = [k for k in split_kernels(sides["split"].program) if k in kernels]
        rows.append(_row(f"bench {name}", times, errors, split))
    return rows


def second_suite(size: str, names: list[str], rounds: int, repeats: int
                 ) -> list[dict[str, Any]]:
    import ppcl
    from benchmarks.programs import BY_NAME
    from benchmarks.programs import runner as runner_module
    from benchmarks.programs.runner import _open, run_on

    platform = ppcl.get_platforms()[0]
    sides = {"split": _open("split", ppcl, platform),
             "no split": _open("no split", no_split_module(), platform)}
    rows = []
    built: list[Any] = []
    real_data = runner_module.Data

    def data(*args: Any, **kwargs: Any) -> Any:
        made = real_data(*args, **kwargs)
        built.append(made)
        return made

    runner_module.Data = data  # to see the programs each run builds
    for name in names:
        built.clear()
        program = BY_NAME[name]
        sz = program.sizes[size]
        inputs = program.make_inputs(sz)
        expected = program.reference(sz, inputs)
        errors: list[str] = []

        def runner(device: Any, program: Any = program, sz: Any = sz, inputs: Any = inputs,
                   expected: Any = expected, errors: list[str] = errors
                   ) -> Callable[[], tuple[float, float]]:
            def run() -> tuple[float, float]:
                outcome = run_on(device, program, sz, inputs, expected, repeats)
                if not outcome.ok or outcome.median_s is None or outcome.min_s is None:
                    errors.append(f"{device.label}: {outcome.error}")
                    return float("nan"), float("nan")
                return outcome.median_s, outcome.min_s
            return run

        times = _rounds({k: runner(d) for k, d in sides.items()}, rounds)
        split = sorted({k for made in built if made.cl is ppcl
                        for k in split_kernels(made.prg)})
        rows.append(_row(name, times, errors, split))
    runner_module.Data = real_data
    return rows


def _row(name: str, times: dict[str, tuple[float, float]], errors: list[str],
         split: list[str]) -> dict[str, Any]:
    (split_med, split_min), (plain_med, plain_min) = times["split"], times["no split"]
    row = {"name": name, "split_ms": split_med * 1e3, "no_split_ms": plain_med * 1e3,
           "ratio_median": plain_med / split_med, "ratio_min": plain_min / split_min,
           "errors": sorted(set(errors)), "split_kernels": split}
    print(f"{name:<28} {row['split_ms']:10.3f} {row['no_split_ms']:10.3f} "
          f"{row['ratio_median']:8.2f}x {row['ratio_min']:8.2f}x  "
          f"{','.join(split) if split else '-'}"
          + (f"  {'; '.join(row['errors'])}" if errors else ""), flush=True)
    return row


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.programs import PROGRAMS
    from ppcl.bench_kernels import CASES

    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.split_suites",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["small", "default"], default="default")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated kernel or program names")
    args = parser.parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    own = [n for n in CASES if not only or n in only]
    second = [p.name for p in PROGRAMS if not only or p.name in only]
    print(f"{'kernel':<28} {'split ms':>10} {'no split':>10} {'median':>9} {'minimum':>9}  "
          "kernels with a split loop")
    rows = own_suite(args.size, own, args.rounds, args.repeats) if own else []
    rows += second_suite(args.size, second, args.rounds, args.repeats) if second else []
    slower = [r["name"] + ("" if r["split_kernels"] else " (no split: noise)") for r in rows
              if r["ratio_median"] < SLOWER and r["ratio_min"] < SLOWER]
    faster = [r["name"] for r in rows if r["ratio_median"] > 1 / SLOWER
              and r["ratio_min"] > 1 / SLOWER]
    print(f"\nfaster with splitting by both ratios: {', '.join(faster) or 'none'}")
    print(f"slower with splitting by both ratios (below {SLOWER}): {', '.join(slower) or 'none'}")
    failed = [r["name"] for r in rows if r["errors"]]
    if failed:
        print(f"errors or results differing from numpy: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
