"""Per-launch cost of back-to-back launches, a launch-heavy Jacobi loop, and threading speedup.

Prints, measured in one run on this machine:

* the per-launch cost of back-to-back launches of an empty 1-group kernel, a 4096-item
  16-group stencil and a 1M-item 4096-group saxpy, min and median, and a 2000-step two-kernel
  Jacobi 1D loop, for ppcl and for pocl through pyopencl when it is importable (set
  ``OCL_ICD_VENDORS=/etc/OpenCL/vendors`` for Debian's pocl package);
* the time of a compute-bound kernel with every thread and with ``PPCL_THREADS=1``, and
  their ratio (each measured in a fresh process, since the thread count is read once).

Usage: ``python3 -m benchmarks.launch_latency [--repeat N] [--jacobi-steps N]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from benchmarks.pass_ab import pocl_module

EMPTY = "__kernel void empty(__global float *x) { }"
STENCIL = """
__kernel void stencil(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i > 0 && i < n - 1)
        b[i] = 0.33333f * (a[i - 1] + a[i] + a[i + 1]);
}
"""
SAXPY = """
__kernel void saxpy(float alpha, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = alpha * x[i] + y[i];
}
"""
COMPUTE = """
__kernel void compute(__global float *x, int rounds)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int r = 0; r < rounds; r++) {
        v = v * 0.9999f + 0.0001f;
        v = sqrt(v * v + 1e-6f);
    }
    x[i] = v;
}
"""

# name, source, kernel, global size, local size, element count of each buffer
CASES = (
    ("empty, 1 group", EMPTY, "empty", 64, 64),
    ("stencil, 4096 items, 16 groups", STENCIL, "stencil", 4096, 256),
    ("saxpy, 1M items, 4096 groups", SAXPY, "saxpy", 1 << 20, 256),
)


def _median_us(run: Any, repeat: int) -> tuple[float, float]:
    """Warm up, then time ``repeat`` back-to-back calls of ``run``: (min, median) in us."""
    for _ in range(max(10, repeat // 10)):
        run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        samples.append(time.perf_counter_ns() - start)
    return min(samples) / 1000.0, statistics.median(samples) / 1000.0


def _kernel_and_args(cl: Any, ctx: Any, case: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    _, source, name, global_size, _ = case
    knl = getattr(cl.Program(ctx, source).build(), name)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a = cl.Buffer(ctx, flags, hostbuf=np.ones(global_size, np.float32))
    b = cl.Buffer(ctx, flags, hostbuf=np.ones(global_size, np.float32))
    if name == "empty":
        return knl, (a,)
    if name == "stencil":
        return knl, (a, b, np.int32(global_size))
    return knl, (np.float32(2.0), a, b)


def latency(cl: Any, case: tuple[Any, ...], repeat: int) -> tuple[float, float]:
    """Per-launch cost of ``repeat`` back-to-back launches of one case, then one finish."""
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    knl, args = _kernel_and_args(cl, ctx, case)
    knl.set_args(*args)
    global_size, local_size = (case[3],), (case[4],)
    batch = 10

    def run() -> None:
        for _ in range(batch):
            cl.enqueue_nd_range_kernel(queue, knl, global_size, local_size)
        queue.finish()

    low, median = _median_us(run, max(10, repeat // batch))
    return low / batch, median / batch


JACOBI = """
__kernel void step_a(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i >= 1 && i < n - 1)
        b[i] = 0.33333f * (a[i - 1] + a[i] + a[i + 1]);
}
__kernel void step_b(__global float *a, __global const float *b, int n)
{
    int i = get_global_id(0);
    if (i >= 1 && i < n - 1)
        a[i] = b[i];
}
"""


def jacobi_ms(cl: Any, steps: int, n: int = 4096) -> tuple[float, np.ndarray]:
    """A 1D Jacobi of ``steps`` time steps, two launches a step (best of 3, ms)."""
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, JACOBI).build()
    host = np.linspace(0, 1, n, dtype=np.float32)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    best = float("inf")
    out = np.empty_like(host)
    ka, kb = prg.step_a, prg.step_b
    for _ in range(4):
        a = cl.Buffer(ctx, flags, hostbuf=host)
        b = cl.Buffer(ctx, flags, hostbuf=host)
        ka.set_args(a, b, np.int32(n))
        kb.set_args(a, b, np.int32(n))
        start = time.perf_counter()
        for _ in range(steps):
            cl.enqueue_nd_range_kernel(queue, ka, (n,), None)
            cl.enqueue_nd_range_kernel(queue, kb, (n,), None)
        queue.finish()
        best = min(best, time.perf_counter() - start)
        cl.enqueue_copy(queue, out, a)
    return best * 1000.0, out


def jacobi_reference(steps: int, n: int = 4096) -> np.ndarray:
    a = np.linspace(0, 1, n, dtype=np.float32)
    for _ in range(steps):
        b = a.copy()
        b[1:-1] = np.float32(0.33333) * (a[:-2] + a[1:-1] + a[2:])
        a = b
    return a


def compute_seconds(repeat: int) -> float:
    import ppcl as cl

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    n = 1 << 16
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=np.ones(n, np.float32))
    knl = cl.Program(ctx, COMPUTE).build().compute
    rounds = np.int32(2000)
    knl(queue, (n,), (64,), buf, rounds)
    queue.finish()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        knl(queue, (n,), (64,), buf, rounds)
        queue.finish()
        times.append(time.perf_counter() - start)
    return min(times)


def _child_compute(threads: str) -> float:
    env = {**os.environ, "PPCL_THREADS": threads} if threads else \
        {k: v for k, v in os.environ.items() if k != "PPCL_THREADS"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run([sys.executable, "-m", "benchmarks.launch_latency", "--child-compute"],
                            env=env, cwd=root, capture_output=True, text=True, check=True)
    return float(json.loads(result.stdout.strip().splitlines()[-1])["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--jacobi-steps", type=int, default=2000)
    parser.add_argument("--child-compute", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_compute:
        print(json.dumps({"seconds": compute_seconds(5)}))
        return

    import ppcl

    threads = ppcl.get_platforms()[0].get_devices()[0].max_compute_units
    pocl = pocl_module()
    print(f"per-launch cost of back-to-back launches (us, min / median); "
          f"ppcl with {threads} threads")
    header = f"{'case':<32} {'ppcl':>15}"
    header += f" {'pocl':>15} {'pocl/ppcl':>10}" if pocl is not None else ""
    print(header)
    for case in CASES:
        low, median = latency(ppcl, case, args.repeat)
        line = f"{case[0]:<32} {low:>6.1f} / {median:>6.1f}"
        if pocl is not None:
            plow, pmedian = latency(pocl, case, args.repeat)
            line += f" {plow:>6.1f} / {pmedian:>6.1f} {pmedian / median:>10.2f}"
        print(line)
    if pocl is None:
        print("(pocl column skipped: pyopencl is not importable or has no platform; "
              "install pocl-opencl-icd and set OCL_ICD_VENDORS=/etc/OpenCL/vendors)")

    steps = args.jacobi_steps
    expected = jacobi_reference(steps)
    ours, result = jacobi_ms(ppcl, steps)
    ok = np.allclose(result, expected, atol=1e-5)
    line = f"jacobi 1D, 4096 points, {steps} steps x 2 kernels: ppcl {ours:.1f} ms"
    line += "" if ok else " (WRONG RESULT)"
    if pocl is not None:
        theirs, result = jacobi_ms(pocl, steps)
        line += f", pocl {theirs:.1f} ms, pocl/ppcl {theirs / ours:.2f}x"
        line += "" if np.allclose(result, expected, atol=1e-5) else " (pocl: WRONG RESULT)"
    print()
    print(line)

    all_threads = _child_compute("")
    one_thread = _child_compute("1")
    print()
    print("compute-bound kernel (65536 work-items x 2000 rounds), best of 5 (ms)")
    print(f"{'threads':>12} {'time':>10}")
    print(f"{threads:>12} {all_threads * 1000:>10.1f}")
    print(f"{1:>12} {one_thread * 1000:>10.1f}")
    print(f"speedup: {one_thread / all_threads:.2f}x")


if __name__ == "__main__":
    main()
