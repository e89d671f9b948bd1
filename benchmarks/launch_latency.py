"""Launch latency of an empty kernel and threading speedup of a compute-bound kernel.

Prints, measured in one run on this machine:

* launch + finish time of an empty kernel (one work-group, and 64 work-groups), median of
  many repetitions, for ppcl and for pocl through pyopencl when it is importable (set
  ``OCL_ICD_VENDORS=/etc/OpenCL/vendors`` for Debian's pocl package);
* the time of a compute-bound kernel with every thread and with ``PPCL_THREADS=1``, and
  their ratio (each measured in a fresh process, since the thread count is read once).

Usage: ``python benchmarks/launch_latency.py [--repeat N]``
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

EMPTY = "__kernel void empty(__global float *x) { }"
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


def _median_us(run: Any, repeat: int) -> float:
    for _ in range(max(10, repeat // 10)):
        run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000.0


def latency(cl: Any, repeat: int, groups: int) -> float:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * groups * 4)
    knl = cl.Program(ctx, EMPTY).build().empty
    knl.set_arg(0, buf)
    global_size = (64 * groups,)
    local_size = (64,)

    def run() -> None:
        cl.enqueue_nd_range_kernel(queue, knl, global_size, local_size)
        queue.finish()

    return _median_us(run, repeat)


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
    result = subprocess.run([sys.executable, __file__, "--child-compute"], env=env,
                            capture_output=True, text=True, check=True)
    return float(json.loads(result.stdout.strip().splitlines()[-1])["seconds"])


def _pocl() -> Any | None:
    os.environ.setdefault("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    try:
        import pyopencl
    except ImportError:
        return None
    try:
        pyopencl.get_platforms()
    except Exception:
        return None
    return pyopencl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--child-compute", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_compute:
        print(json.dumps({"seconds": compute_seconds(5)}))
        return

    import ppcl

    threads = ppcl.get_platforms()[0].get_devices()[0].max_compute_units
    pocl = _pocl()
    print(f"launch + finish of an empty kernel, median of {args.repeat} (us); "
          f"ppcl with {threads} threads")
    header = f"{'work-groups':>12} {'ppcl':>10}"
    header += f" {'pocl':>10} {'pocl/ppcl':>10}" if pocl is not None else ""
    print(header)
    for groups in (1, 64):
        ours = latency(ppcl, args.repeat, groups)
        line = f"{groups:>12} {ours:>10.1f}"
        if pocl is not None:
            theirs = latency(pocl, args.repeat, groups)
            line += f" {theirs:>10.1f} {theirs / ours:>10.2f}"
        print(line)
    if pocl is None:
        print("(pocl column skipped: pyopencl is not importable or has no platform; "
              "install pocl-opencl-icd and set OCL_ICD_VENDORS=/etc/OpenCL/vendors)")

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
