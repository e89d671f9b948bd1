"""ppcl's CUDA device against NVIDIA's OpenCL driver (through pyopencl), in the same run.

The same OpenCL program runs on both with the same launch shapes: an empty launch, saxpy of
16M floats, sgemm 1024 (naive and tiled in local memory), a reduction of 16M floats and a 5x5
convolution of a 2048x2048 image. Each result is checked against numpy. A time is the time of
one launch followed by a wait for it (``finish``): a sample is ten of them, a round the median
of ``--repeats`` samples after warm-up (``ppcl/timing.py``), and the figure the median of
``--rounds`` rounds, ppcl and NVIDIA taking turns in each. Waiting for each launch is what a
ppcl command does (a command completes when its kernel has run); NVIDIA's driver could also
overlap back-to-back launches, which this measure leaves out. The cold builds are this
program and the 16 kernels of ``ppcl bench`` (``ppcl/bench_source.py``), built with an empty
kernel cache (ppcl) and with ``CUDA_CACHE_DISABLE=1`` and ``PYOPENCL_NO_CACHE=1`` (NVIDIA).
ppcl's ``build()`` returns with a quickly compiled module whose fully optimized successor
compiles on a thread; "both optimized" is the time from the first build until both programs
have theirs, against the two builds of the driver. "Platforms to built program" adds the time
from the first call (``get_platforms``) through the context to the first build: a driver may
load its compiler at either (both do it while making the context: NVIDIA's takes 1.2-2.5 s
there on the GPU machine, ppcl's 0.5-0.65 s), so the build alone leaves part of a cold start
out.

Usage: ``python3 -m benchmarks.gpu [--json FILE] [--repeats N] [--rounds N]``. pyopencl finds NVIDIA's
driver through ``OCL_ICD_VENDORS`` (a directory holding ``nvidia.icd``) where the system has
no ``/etc/OpenCL/vendors``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ppcl.bench_source import SOURCE as BENCH_SUITE_SOURCE
from ppcl.timing import measure

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")  # NVIDIA's driver compiles from source
os.environ.setdefault("PYOPENCL_NO_CACHE", "1")  # and pyopencl keeps no binaries of its own

SOURCE = """
__kernel void empty(__global float *x) { }

__kernel void saxpy(float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

__kernel void sgemm_naive(int n, __global const float *A, __global const float *B,
                          __global float *C) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}

#define TS 32
__kernel void sgemm_tiled(int n, __global const float *A, __global const float *B,
                          __global float *C) {
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += TS) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++) acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}

__kernel void reduce(__global const float *in, __global float *partial, __local float *s,
                     uint n) {
    uint lid = get_local_id(0);
    float acc = 0.0f;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = s[0];
}

__kernel void conv5(__global const float *img, __constant float *filt, __global float *out,
                    int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; dy++) {
        int yy = clamp(y + dy, 0, h - 1);
        for (int dx = -2; dx <= 2; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            acc += filt[(dy + 2) * 5 + dx + 2] * img[yy * w + xx];
        }
    }
    out[y * w + x] = acc;
}
"""

SAXPY_N = 1 << 24
GEMM_N = 1024
REDUCE_N = 1 << 24
REDUCE_GROUPS, REDUCE_LOCAL = 1024, 256
CONV_N = 2048
BATCH = 10  # launches per timed sample, each waited for: the GPU stays at its working clock

def _conv_reference(img: np.ndarray, filt: np.ndarray) -> np.ndarray:
    padded = np.pad(img, 2, mode="edge")
    out = np.zeros_like(img)
    for dy in range(5):
        for dx in range(5):
            out += filt[dy, dx] * padded[dy:dy + img.shape[0], dx:dx + img.shape[1]]
    return out


def _optimized_modules_loaded(start: float) -> float:
    """Seconds from ``start`` until ppcl's optimized modules are loaded (the threads that make
    them end); how long the builds took where there are none."""
    for thread in threading.enumerate():
        if thread.name.startswith("ppcl-cuda-optimized"):
            thread.join()
    return time.perf_counter() - start


class Suite:
    """One implementation's program, buffers and launches, ready to time."""

    def __init__(self, cl: Any, ctx: Any, context_s: float) -> None:
        self.queue = cl.CommandQueue(ctx)
        start = time.perf_counter()
        self.program = cl.Program(ctx, SOURCE).build()
        self.build_s = time.perf_counter() - start
        self.started_s = context_s + self.build_s  # from get_platforms to a built program
        start = time.perf_counter()  # the 16 kernels of ``ppcl bench``
        cl.Program(ctx, BENCH_SUITE_SOURCE).build()
        self.suite_build_s = time.perf_counter() - start
        # ppcl's build returns with a quickly compiled module, the fully optimized one
        # following on a thread: until both programs have theirs (the driver's build is
        # fully optimized when it returns)
        self.optimized_s = _optimized_modules_loaded(start - self.build_s)
        # name -> (one launch, check of the output)
        self.cases: dict[str, tuple[Callable[[], Any], Callable[[], bool]]] = {}
        _add_cases(self, cl, ctx)

    def batch(self, name: str) -> Callable[[], None]:
        launch, queue = self.cases[name][0], self.queue

        def run() -> None:
            for _ in range(BATCH):
                launch()
                queue.finish()
        return run


def _add_cases(suite: Suite, cl: Any, ctx: Any) -> None:
    mf = cl.mem_flags
    queue, prg = suite.queue, suite.program
    rng = np.random.default_rng(0)

    def read(buf: Any, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        cl.enqueue_copy(queue, out, buf)
        return out

    # every kernel is retrieved once (pyopencl makes a new kernel object at each retrieval)
    empty, saxpy, reduce, conv5 = prg.empty, prg.saxpy, prg.reduce, prg.conv5
    naive, tiled = prg.sgemm_naive, prg.sgemm_tiled
    dummy = cl.Buffer(ctx, mf.READ_WRITE, 4)
    suite.cases["empty launch"] = (lambda: empty(queue, (1,), (1,), dummy), lambda: True)

    x = rng.random(SAXPY_N, dtype=np.float32)
    y = rng.random(SAXPY_N, dtype=np.float32)
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    suite.cases["saxpy 16M"] = (
        lambda: saxpy(queue, (SAXPY_N,), (256,), np.float32(0.0), bx, by),
        lambda: np.array_equal(read(by, y), y))

    a = rng.random((GEMM_N, GEMM_N), dtype=np.float32)
    b = rng.random((GEMM_N, GEMM_N), dtype=np.float32)
    ba = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    bc1 = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    bc2 = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    expected = a @ b
    n = np.int32(GEMM_N)
    suite.cases["sgemm naive"] = (
        lambda: naive(queue, (GEMM_N, GEMM_N), (16, 16), n, ba, bb, bc1),
        lambda: np.allclose(read(bc1, expected), expected, rtol=1e-3, atol=1e-2))
    suite.cases["sgemm tiled"] = (
        lambda: tiled(queue, (GEMM_N, GEMM_N), (32, 32), n, ba, bb, bc2),
        lambda: np.allclose(read(bc2, expected), expected, rtol=1e-3, atol=1e-2))

    data = rng.random(REDUCE_N, dtype=np.float32)
    bd = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    partial = np.empty(REDUCE_GROUPS, dtype=np.float32)
    bp = cl.Buffer(ctx, mf.WRITE_ONLY, partial.nbytes)
    scratch = cl.LocalMemory(REDUCE_LOCAL * 4)
    suite.cases["reduction 16M"] = (
        lambda: reduce(queue, (REDUCE_GROUPS * REDUCE_LOCAL,), (REDUCE_LOCAL,), bd, bp, scratch,
                       np.uint32(REDUCE_N)),
        lambda: math.isclose(float(read(bp, partial).astype(np.float64).sum()),
                             float(data.astype(np.float64).sum()), rel_tol=1e-4))

    img = rng.random((CONV_N, CONV_N), dtype=np.float32)
    filt = rng.random((5, 5), dtype=np.float32)
    bi = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=img)
    bf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=filt)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, img.nbytes)
    conv = _conv_reference(img, filt)
    suite.cases["conv2d 2048^2 5x5"] = (
        lambda: conv5(queue, (CONV_N, CONV_N), (32, 8), bi, bf, bo, np.int32(CONV_N),
                      np.int32(CONV_N)),
        lambda: np.allclose(read(bo, conv), conv, rtol=1e-4, atol=1e-4))


def settle_host_fusion(launch: Callable[[], Any], queue: Any, limit_s: float = 60.0) -> None:
    """Under ``PPCL_HOSTFUSION``, launch until the guard has timed every candidate of this
    launch's shape and chosen (its candidates build in the background, each an NVRTC compile
    of a few tenths of a second, while a benchmark's launches of a kernel last less): the
    timed launches then run what a long-running program would run. Nothing for other queues."""
    hostfusion = sys.modules.get("ppcl.hostfusion")
    if hostfusion is None or not getattr(queue, "_hostfusion", None):
        return
    from ppcl.hostfusion.guard import wait_for_builds

    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        launch()
        queue.finish()
        wait_for_builds()
        if all(d.trial is None or d.trial.choice is not None for d in hostfusion.decisions()):
            return


def time_suites(suites: dict[str, Suite], repeats: int, rounds: int) -> dict[str, Any]:
    """Per implementation and benchmark: the median over ``rounds`` of each round's median
    time of one launch, the implementations taking turns within every round (so that a drift
    of the GPU's clock or temperature meets both alike), and whether the output checked."""
    results: dict[str, dict[str, Any]] = {
        label: {"cold build": suite.build_s, "cold build, bench suite": suite.suite_build_s,
                "cold build, both optimized": suite.optimized_s,
                "cold: platforms to built program": suite.started_s}
        for label, suite in suites.items()}
    names = list(next(iter(suites.values())).cases)
    for name in names:
        for suite in suites.values():
            settle_host_fusion(suite.cases[name][0], suite.queue)
        per_round: dict[str, list[float]] = {label: [] for label in suites}
        for _ in range(rounds):
            for label, suite in suites.items():
                m = measure(suite.batch(name), repeats=repeats)
                per_round[label].append(m.timing.median_s / BATCH)
        for label, suite in suites.items():
            results[label][name] = statistics.median(per_round[label])
            results[label][name + " ok"] = bool(suite.cases[name][1]())
    return results


def _ppcl_context(platform_name: str) -> tuple[Any, Any, float]:
    """ppcl, a context on the platform and the seconds its discovery and context took."""
    import ppcl

    start = time.perf_counter()
    found = [p for p in ppcl.get_platforms() if p.name == platform_name]
    if not found:
        raise SystemExit(f"no ppcl platform '{platform_name}' here (the CUDA platform needs an "
                         "NVIDIA GPU and cupy)")
    ctx = ppcl.Context([found[0].get_devices()[0]])
    return ppcl, ctx, time.perf_counter() - start


def _vendor_context(vendor: str) -> tuple[Any, Any, float] | None:
    """pyopencl, a context on the vendor's platform and the seconds they took (its import
    not counted)."""
    try:
        import pyopencl
    except ImportError:
        return None
    start = time.perf_counter()
    for platform in pyopencl.get_platforms():
        if vendor in platform.name:
            ctx = pyopencl.Context(platform.get_devices())
            return pyopencl, ctx, time.perf_counter() - start
    return None


def _show(name: str, seconds: float) -> str:
    if name.startswith("sgemm"):
        return f"{2 * GEMM_N ** 3 / seconds / 1e12:6.2f} TFLOP/s"
    if seconds < 1e-3 or name.startswith("empty"):
        return f"{seconds * 1e6:7.1f} us"
    return f"{seconds * 1e3:7.3f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--repeats", type=int, default=5, help="timed samples per round")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each implementation")
    parser.add_argument("--platform", default="ppcl CUDA", help="the ppcl platform to time")
    parser.add_argument("--vendor", default="NVIDIA",
                        help="the pyopencl platform to compare with (a word of its name)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ppcl-gpu-bench-") as cache:
        os.environ["PPCL_CACHE_DIR"] = cache  # the cold build starts from an empty cache
        ppcl, ctx, context_s = _ppcl_context(args.platform)
        ours_label, theirs_label = args.platform, f"{args.vendor} OpenCL"
        suites = {ours_label: Suite(ppcl, ctx, context_s)}
        vendor = _vendor_context(args.vendor)
        if vendor is not None:
            suites[theirs_label] = Suite(*vendor)
        figures = time_suites(suites, args.repeats, args.rounds)
    device = ctx.devices[0].name
    print(f"device: {device}")
    ours = figures[ours_label]
    theirs = figures.get(theirs_label)
    names = [k for k in ours if not k.endswith(" ok")]
    print(f"{'benchmark':24} {ours_label:>16} {theirs_label:>16} {'speedup':>8}  checks")
    ratios = []
    for name in names:
        mine = ours[name]
        other = theirs[name] if theirs else None
        ratio = other / mine if other else None
        if ratio is not None and not name.startswith(("cold", "empty launch")):
            ratios.append(ratio)
        checks = "ok" if ours.get(name + " ok", True) and (
            theirs is None or theirs.get(name + " ok", True)) else "WRONG"
        other_text = _show(name, other) if other else "-"
        ratio_text = f"{ratio:7.2f}x" if ratio else "-"
        print(f"{name:24} {_show(name, mine):>16} {other_text:>16} {ratio_text:>8}  {checks}")
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geometric mean of the kernels' speedups over {theirs_label}: {geomean:.2f}x "
              f"(lowest {min(ratios):.2f}x; empty launch and build not counted)")
        figures["geomean"] = {"speedup": geomean, "lowest": min(ratios)}
    else:
        print(f"{theirs_label}: not found (pyopencl and the vendor's ICD are needed)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"device": device, **figures}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
