"""The benchmark suite: the kernels of ``ppcl.bench_kernels`` on ppcl and on pocl, against numpy.

``main(argv)`` is the ``ppcl bench`` command (also ``python -m benchmarks``). In one process and
one run it

- builds the suite's program on every backend, cold (an empty kernel cache) and warm,
- measures the launch latency of an empty kernel (launch + finish),
- measures reference limits: numpy copy bandwidth and numpy/BLAS sgemm,
- runs every kernel on every backend, checks the results against numpy, and reports the median
  time of repeated runs after a warm-up, GB/s or GFLOP/s, the fraction of the relevant limit,
  and the speedup of ppcl over pocl (pocl time / ppcl time) with its geometric mean,
- prints each performance target and whether it was met.

A backend is a module with PyOpenCL's API: ``ppcl`` itself, and ``pyopencl`` driving pocl. Both
run the same host code. A result that differs from numpy is a FAIL and makes the exit status 1;
performance targets are reported, not enforced. Times are wall-clock around the enqueues and
``finish``, so they include the launch overhead each runtime has.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from ppcl.bench_kernels import CASES, Case, make_case
from ppcl.bench_source import SOURCE
from ppcl.timing import measure

POCL_PLATFORM = "Portable Computing Language"
SYSTEM_ICD_VENDORS = "/etc/OpenCL/vendors"


@dataclass
class Target:
    """A performance goal and, once measured, its value and whether it was met."""

    name: str
    goal: str
    value: str = "n/a"
    met: bool | None = None


@dataclass
class KernelResult:
    """One case on one backend."""

    ok: bool
    error: str | None = None
    median_s: float | None = None
    warmup_s: float | None = None  # the first run, which includes any compilation on launch
    # Median over runs of the summed event-profiled kernel times (end - start), when available.
    event_s: float | None = None
    times_s: list[float] = field(default_factory=list)
    rate: float | None = None  # GB/s or GFLOP/s, see ``rate_unit``
    limit_fraction: float | None = None


class Backend:
    """A PyOpenCL-style module, a context on one of its CPU devices, and a profiling queue."""

    def __init__(self, label: str, cl: ModuleType, device: Any) -> None:
        self.label = label
        self.cl = cl
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.program: Any = None
        self.kernels: dict[str, Any] = {}
        self.build_cold_s: float | None = None
        self.build_warm_s: float | None = None
        self.launch_s: float | None = None
        # Sum over the kernels of (first run - median run): compilation deferred to launch.
        self.first_run_extra_s: float | None = None
        self.setup_error: str | None = None

    def describe(self) -> str:
        return f"{self.label}: {self.device.platform.name} / {self.device.name}"

    def build(self) -> float:
        start = time.perf_counter()
        program = self.cl.Program(self.context, SOURCE).build()
        elapsed = time.perf_counter() - start
        self.program = program
        self.kernels = {}
        return elapsed

    def kernel(self, name: str) -> Any:
        """The kernel ``name`` of the built program, retrieved once and reused."""
        if name not in self.kernels:
            self.kernels[name] = getattr(self.program, name)
        return self.kernels[name]

    def to_device(self, array: np.ndarray) -> Any:
        mf = self.cl.mem_flags
        return self.cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                              hostbuf=np.ascontiguousarray(array))

    def allocate(self, nbytes: int) -> Any:
        return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, size=max(nbytes, 4))

    def read(self, buffer: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        host = np.empty(shape, dtype=dtype)
        self.cl.enqueue_copy(self.queue, host, buffer)
        self.queue.finish()
        return host


def _find_device(cl: ModuleType, platform_name: str | None) -> Any:
    """The first CPU device (any device if there is no CPU) of the named or first platform."""
    platforms = cl.get_platforms()
    if platform_name is not None:
        platforms = [p for p in platforms if platform_name in p.name]
    if not platforms:
        raise RuntimeError(f"no platform named {platform_name!r}")
    for platform in platforms:
        try:
            cpus = platform.get_devices(device_type=cl.device_type.CPU)
        except Exception:  # some ICDs raise DEVICE_NOT_FOUND instead of returning []
            cpus = []
        if cpus:
            return cpus[0]
    devices = platforms[0].get_devices()
    if not devices:
        raise RuntimeError("the platform has no devices")
    return devices[0]


def open_ppcl() -> Backend:
    import ppcl as cl

    return Backend("ppcl", cl, _find_device(cl, None))


def open_pocl(notices: list[str]) -> Backend:
    """pyopencl on pocl, its kernel cache (and pyopencl's) pointed at a fresh directory so that
    the first build is cold. The environment only takes effect if pocl is not running yet."""
    if "pyopencl" in sys.modules:
        notices.append("pyopencl was imported before the suite: pocl's cold build may be warm")
    if "OCL_ICD_VENDORS" not in os.environ and os.path.isdir(SYSTEM_ICD_VENDORS):
        os.environ["OCL_ICD_VENDORS"] = SYSTEM_ICD_VENDORS
    os.environ["POCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="ppcl-bench-pocl-cache-")
    os.environ["PYOPENCL_NO_CACHE"] = "1"
    import pyopencl as cl

    return Backend("pocl", cl, _find_device(cl, POCL_PLATFORM))


def time_samples(action: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def median_time(action: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    return statistics.median(time_samples(action, repeats, warmup))


def measure_setup(backend: Backend, launch_samples: int) -> None:
    """Cold and warm build of the suite's program and the empty-kernel launch latency."""
    backend.build_cold_s = backend.build()
    backend.build_warm_s = min(backend.build() for _ in range(3))
    empty = backend.kernel("empty")
    queue = backend.queue
    dummy = backend.allocate(4)

    def launch() -> None:
        empty(queue, (1,), (1,), dummy)
        queue.finish()

    backend.launch_s = median_time(launch, launch_samples, warmup=10)


def numpy_limits(size: str, repeats: int) -> dict[str, float]:
    """Copy bandwidth (read + write bytes) and float32 matrix-product speed of numpy.

    These are limits, so the best of the repeated runs counts. ``np.copyto`` runs on one thread;
    the BLAS product on as many as BLAS is configured for."""
    count = 1 << 22 if size == "small" else 1 << 25
    source = np.ones(count, dtype=np.float32)
    target = np.empty_like(source)
    copy_s = min(time_samples(lambda: np.copyto(target, source), repeats))
    threads = os.cpu_count() or 1
    bounds = np.linspace(0, count, threads + 1).astype(int)
    parts = [(target[lo:hi], source[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]
    with ThreadPoolExecutor(threads) as pool:  # np.copyto releases the GIL
        def threaded_copy() -> None:
            list(pool.map(lambda part: np.copyto(*part), parts))

        threaded_copy_s = min(time_samples(threaded_copy, repeats))
    n = 256 if size == "small" else 1024
    a = np.random.default_rng(1).random((n, n), dtype=np.float32)
    b = np.random.default_rng(2).random((n, n), dtype=np.float32)
    gemm_s = min(time_samples(lambda: a @ b, repeats))
    return {
        "copy_GBps": 2.0 * source.nbytes / copy_s / 1e9,
        "copy_bytes": float(2 * source.nbytes),
        "threaded_copy_GBps": 2.0 * source.nbytes / threaded_copy_s / 1e9,
        "copy_threads": float(threads),
        "sgemm_GFLOPs": 2.0 * n ** 3 / gemm_s / 1e9,
        "sgemm_n": float(n),
    }


def rate_unit(case: Case) -> str:
    return "GB/s" if case.bound == "memory" else "GFLOP/s"


def event_time(events: Sequence[Any]) -> float | None:
    """Seconds between start and end of the profiled events, summed; None if not profiled."""
    try:
        return sum(event.profile.end - event.profile.start for event in events) * 1e-9
    except Exception:
        return None


def run_case(backend: Backend, case: Case, repeats: int,
             limits: dict[str, float]) -> KernelResult:
    buffers: dict[str, Any] = {}
    try:
        for name, array in case.inputs.items():
            buffers[name] = backend.to_device(array)
        for name, (shape, dtype) in {**case.outputs, **case.scratch}.items():
            buffers[name] = backend.allocate(int(np.prod(shape)) * dtype.itemsize)
        queue = backend.queue
        steps = [(backend.kernel(launch.kernel), launch.global_size,
                  launch.local_size,
                  tuple(buffers[a] if isinstance(a, str) else a for a in launch.args))
                 for launch in case.launches]

        events: list[Any] = []
        event_times: list[float] = []

        def run_once() -> None:
            events.clear()
            for kernel, global_size, local_size, args in steps:
                events.append(kernel(queue, global_size, local_size, *args))
            queue.finish()
            profiled = event_time(events)
            if profiled is not None:
                event_times.append(profiled)

        # warm-up until two runs agree, then the timed runs; the outputs checked are those of
        # the last timed run. Checking before timing ran numpy's BLAS (float64 references)
        # just before the timed runs, and its threads, spinning for a while after a call,
        # took cores from a multi-threaded device: a 16-thread sgemm timed 2x slower.
        measured = measure(run_once, repeats)
        outputs = {name: backend.read(buffers[name], shape, dtype)
                   for name, (shape, dtype) in case.outputs.items()}
        error = case.check(outputs)
        times = list(measured.timing.times_s)
        warmup = measured.timing.warmup_s[0]
        event_times = event_times[-repeats:] if len(event_times) >= repeats else []
    except Exception as exc:  # a backend that cannot run a case reports it and goes on
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return KernelResult(ok=False, error=f"{type(exc).__name__}: {first_line}")
    finally:
        for buffer in buffers.values():
            release = getattr(buffer, "release", None)
            if release is not None:
                release()
    median = statistics.median(times)
    amount = case.bytes_moved if case.bound == "memory" else case.flops
    rate = amount / median / 1e9 if amount else None
    fraction = None
    if rate is not None and case.bound == "memory":
        fraction = rate / limits["copy_GBps"]
    elif rate is not None and case.bound == "sgemm":
        fraction = rate / limits["sgemm_GFLOPs"]
    return KernelResult(ok=error is None, error=error, median_s=median, warmup_s=warmup,
                        event_s=statistics.median(event_times) if event_times else None,
                        times_s=times, rate=rate, limit_fraction=fraction)


def speedup(results: dict[str, KernelResult]) -> float | None:
    ppcl, pocl = results.get("ppcl"), results.get("pocl")
    if ppcl is None or pocl is None or not ppcl.ok or not pocl.ok:
        return None
    assert ppcl.median_s is not None and pocl.median_s is not None
    return pocl.median_s / ppcl.median_s


def geometric_mean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def evaluate_targets(backends: dict[str, Backend], cases: list[Case],
                     results: dict[str, dict[str, KernelResult]],
                     speedups: dict[str, float], mean: float | None) -> list[Target]:
    targets = [
        Target("no kernel slower than pocl", "every speedup >= 0.9x"),
        Target("geometric mean speedup", ">= 3x"),
        Target("memory-bound kernels", ">= 85% of numpy copy bandwidth"),
        Target("sgemm_naive speedup", ">= 10x"),
        Target("reduction speedup", ">= 10x"),
        Target("cold build", "<= 0.3 s"),
        Target("warm build", "<= 5 ms"),
        Target("empty-kernel launch", "<= 20 us"),
    ]
    ppcl = backends.get("ppcl")
    if ppcl is None:
        return targets
    if "pocl" in backends and speedups:
        slowest = min(speedups, key=lambda name: speedups[name])
        targets[0].value = f"slowest {slowest} {speedups[slowest]:.2f}x"
        targets[0].met = speedups[slowest] >= 0.9 and len(speedups) == len(cases)
    if mean is not None:
        targets[1].value = f"{mean:.2f}x"
        targets[1].met = mean >= 3.0
    memory = [(case.name, results[case.name].get("ppcl")) for case in cases
              if case.bound == "memory"]
    fractions = {name: r.limit_fraction for name, r in memory
                 if r is not None and r.limit_fraction is not None}
    if fractions:
        lowest = min(fractions, key=lambda name: fractions[name])
        targets[2].value = f"lowest {lowest} {100 * fractions[lowest]:.0f}%"
        targets[2].met = fractions[lowest] >= 0.85 and len(fractions) == len(memory)
    for target, name in ((targets[3], "sgemm_naive"), (targets[4], "reduction")):
        if name in speedups:
            target.value = f"{speedups[name]:.2f}x"
            target.met = speedups[name] >= 10.0
    if ppcl.build_cold_s is not None and ppcl.build_warm_s is not None:
        targets[5].value = f"{ppcl.build_cold_s:.3f} s"
        if ppcl.first_run_extra_s is not None:
            targets[5].value += f" (+{ppcl.first_run_extra_s:.2f} s at launch)"
        targets[5].met = ppcl.build_cold_s <= 0.3
        targets[6].value = f"{1e3 * ppcl.build_warm_s:.2f} ms"
        targets[6].met = ppcl.build_warm_s <= 0.005
    if ppcl.launch_s is not None:
        targets[7].value = f"{1e6 * ppcl.launch_s:.1f} us"
        targets[7].met = ppcl.launch_s <= 20e-6
    return targets


def _fmt(value: float | None, scale: float = 1.0, digits: int = 2) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def print_report(labels: list[str], backends: dict[str, Backend], limits: dict[str, float],
                 cases: list[Case], results: dict[str, dict[str, KernelResult]],
                 speedups: dict[str, float], mean: float | None,
                 targets: list[Target]) -> None:
    print(f"numpy copy bandwidth {limits['copy_GBps']:.2f} GB/s (np.copyto, one thread, "
          f"read + write; {limits['threaded_copy_GBps']:.2f} GB/s on "
          f"{int(limits['copy_threads'])} threads); "
          f"numpy/BLAS sgemm {limits['sgemm_GFLOPs']:.1f} GFLOP/s (n={int(limits['sgemm_n'])})")
    print()
    header = f"{'':24}" + "".join(f"{label:>12}" for label in labels)
    print(header)
    rows = [("build cold (s)", "build_cold_s", 1.0, 3), ("build warm (ms)", "build_warm_s", 1e3, 2),
            ("empty launch (us)", "launch_s", 1e6, 1),
            ("first-run extra (s)", "first_run_extra_s", 1.0, 3)]
    for title, attribute, scale, digits in rows:
        print(f"{title:24}" + "".join(
            f"{_fmt(getattr(backends[label], attribute), scale, digits):>12}" for label in labels))
    print()
    columns = f"{'kernel':14}{'size':26}"
    for label in labels:
        columns += f"{label + ' ms':>11}{label + ' rate':>16}{'limit':>7}{'check':>7}"
    if len(labels) == 2:
        columns += f"{'speedup':>9}"
    print(columns)
    print("-" * len(columns))
    failures = []
    for case in cases:
        line = f"{case.name:14}{case.what[:25]:26}"
        for label in labels:
            result = results[case.name][label]
            if result.error is not None:
                failures.append(f"{case.name} on {label}: {result.error}")
            rate = "-" if result.rate is None else f"{result.rate:.2f} {rate_unit(case)}"
            limit = "-" if result.limit_fraction is None else f"{100 * result.limit_fraction:.0f}%"
            line += (f"{_fmt(result.median_s, 1e3, 3):>11}{rate:>16}{limit:>7}"
                     f"{'ok' if result.ok else 'FAIL':>7}")
        if len(labels) == 2:
            value = speedups.get(case.name)
            line += f"{'-' if value is None else f'{value:.2f}x':>9}"
        print(line)
    if len(labels) == 2:
        print(f"{'geometric mean speedup (pocl time / ppcl time)':>{len(columns) - 9}}"
              f"{'-' if mean is None else f'{mean:.2f}x':>9}")
    print("limit: memory-bound kernels as a fraction of numpy copy bandwidth, sgemm of BLAS; "
          "first-run extra: sum over kernels of first run minus median run (lazy compilation)")
    for failure in failures:
        print(f"FAIL {failure}")
    print()
    print("targets (ppcl)")
    for target in targets:
        verdict = {None: "n/a", True: "met", False: "MISSED"}[target.met]
        print(f"  {target.name:30}{target.goal:34}{target.value:>32}  {verdict}")


def write_json(path: str, args: argparse.Namespace, backends: dict[str, Backend],
               limits: dict[str, float], cases: list[Case],
               results: dict[str, dict[str, KernelResult]], speedups: dict[str, float],
               mean: float | None, targets: list[Target], notices: list[str]) -> None:
    report = {
        "size": args.size,
        "repeats": args.repeats,
        "notices": notices,
        "limits": limits,
        "backends": {
            label: {"device": backend.describe(), "build_cold_s": backend.build_cold_s,
                    "build_warm_s": backend.build_warm_s, "launch_s": backend.launch_s,
                    "first_run_extra_s": backend.first_run_extra_s,
                    "setup_error": backend.setup_error}
            for label, backend in backends.items()},
        "kernels": [
            {"name": case.name, "size": case.what, "bytes": case.bytes_moved,
             "flops": case.flops, "bound": case.bound, "rate_unit": rate_unit(case),
             "speedup": speedups.get(case.name),
             "results": {label: vars(result) for label, result in results[case.name].items()}}
            for case in cases],
        "geomean_speedup": mean,
        "targets": [vars(target) for target in targets],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="ppcl bench",
        description="Run the benchmark kernels on ppcl and on pocl (through pyopencl), check "
                    "them against numpy and report times, rates, speedups and targets.")
    parser.add_argument("--only", help="comma-separated kernels: " + ",".join(CASES))
    parser.add_argument("--size", choices=("small", "default"), default="default")
    parser.add_argument("--json", metavar="FILE", help="also write every number to FILE")
    parser.add_argument("--repeats", type=int,
                        help="timed runs per kernel after the warm-up, which lasts until two runs agree within 5%% (default 5, small 2)")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 2 if args.size == "small" else 5
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = list(CASES) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [name for name in names if name not in CASES]
    if unknown:
        print(f"ppcl bench: unknown kernel(s) {', '.join(unknown)}; known: {', '.join(CASES)}",
              file=sys.stderr)
        return 2

    saved_env = {key: os.environ.get(key) for key in
                 ("PPCL_CACHE_DIR", "POCL_CACHE_DIR", "PYOPENCL_NO_CACHE", "OCL_ICD_VENDORS")}
    try:
        return _run(args, names)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _run(args: argparse.Namespace, names: list[str]) -> int:
    notices: list[str] = []
    backends: dict[str, Backend] = {}
    # A fresh ppcl cache makes the first build cold; later builds of this run are warm.
    with tempfile.TemporaryDirectory(prefix="ppcl-bench-cache-") as cache:
        os.environ["PPCL_CACHE_DIR"] = cache
        for label, opener in (("ppcl", open_ppcl), ("pocl", lambda: open_pocl(notices))):
            try:
                backends[label] = opener()
            except Exception as exc:
                notices.append(f"{label} column skipped: {type(exc).__name__}: "
                               f"{(str(exc).strip().splitlines() or [''])[0]}")
        for notice in notices:
            print(notice)
        for label, backend in list(backends.items()):
            print(backend.describe())
            try:
                measure_setup(backend, 40 if args.size == "small" else 200)
            except Exception as exc:
                message = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
                print(f"{label}: the suite's program does not build or launch: {message}")
                notices.append(f"{label} setup failed: {message}")
                backend.setup_error = message
        if not backends:
            print("ppcl bench: no backend could be opened", file=sys.stderr)
            return 1
        return _run_cases(args, names, backends, notices)


def _run_cases(args: argparse.Namespace, names: list[str], backends: dict[str, Backend],
               notices: list[str]) -> int:
    labels = list(backends)
    limits = numpy_limits(args.size, max(args.repeats, 5))
    rng = np.random.default_rng(12345)
    cases: list[Case] = []
    results: dict[str, dict[str, KernelResult]] = {}
    for name in names:
        case = make_case(name, args.size, rng)
        cases.append(case)
        results[name] = {}
        for label in labels:
            backend = backends[label]
            if backend.setup_error is not None:
                results[name][label] = KernelResult(ok=False, error=backend.setup_error)
                continue
            results[name][label] = run_case(backend, case, args.repeats, limits)
    for label, backend in backends.items():
        extras = [r.warmup_s - r.median_s for per_backend in results.values()
                  if (r := per_backend[label]).warmup_s is not None and r.median_s is not None]
        backend.first_run_extra_s = sum(extras) if extras else None
    speedups = {name: value for name in names
                if (value := speedup(results[name])) is not None}
    mean = geometric_mean(list(speedups.values()))
    targets = evaluate_targets(backends, cases, results, speedups, mean)
    print()
    print_report(labels, backends, limits, cases, results, speedups, mean, targets)
    if args.json:
        write_json(args.json, args, backends, limits, cases, results, speedups, mean, targets,
                   notices)
    all_ok = all(result.ok for per_backend in results.values() for result in per_backend.values())
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
