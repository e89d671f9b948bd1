"""Choices on the data in kernels that scatter their stores, as sorting networks write them,
on ppcl's CPU device with the selects pass and without it (``-ppcl-no-selects``), beside pocl.

Four one-kernel programs over 1M random floats: a bitonic compare-and-swap written with
``if``/``else`` stores, with ``?:`` and with ``select``, and the AMD sample's spelling (the
greater and the lesser chosen into variables) storing each pair at a permuted place. None was written
for the pass. The three columns are timed in turns (``ppcl.timing.measure_in_turns``), min
and median of ``--repeats`` rounds; every result is compared with pocl's when pocl is there,
and the two ppcl builds must agree exactly.

    python3 -m benchmarks.branch_free [--only NAME[,NAME]] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import ppcl
from benchmarks.names import pick_names
from ppcl.timing import measure_in_turns

N = 1 << 20

KERNELS: dict[str, tuple[str, tuple[int, ...]]] = {
    "bitonic_if": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        if ((x > y) == ((i & 256u) == 0)) { o[i] = y; o[ixj] = x; }
        else { o[i] = x; o[ixj] = y; }
    }
}""", (N,)),
    "bitonic_conditional": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        int swap = (x > y) == ((i & 256u) == 0);
        o[i] = swap ? y : x;
        o[ixj] = swap ? x : y;
    }
}""", (N,)),
    "bitonic_select": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        int swap = (x > y) == ((i & 256u) == 0);
        o[i] = select(x, y, swap);
        o[ixj] = select(y, x, swap);
    }
}""", (N,)),
    "order_through_table": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int i = get_global_id(0);
    float l = a[2 * i], r = a[2 * i + 1], greater, lesser;
    if (l > r) { greater = l; lesser = r; } else { greater = r; lesser = l; }
    int to = (int)(((uint)i * 7919u) % (uint)(N / 2));  /* a permutation of the pairs */
    o[2 * to] = lesser;
    o[2 * to + 1] = greater;
}""".replace("N / 2", str(N // 2)), (N // 2,)),
}


class Column:
    """One kernel built on one platform with one option string, its buffers and its launch."""

    def __init__(self, cl: Any, ctx: Any, source: str, gsize: tuple[int, ...],
                 options: str = "") -> None:
        self.cl = cl
        self.queue = cl.CommandQueue(ctx)
        self.kernel = cl.Program(ctx, source).build(options=options).k
        rng = np.random.default_rng(0)
        mf = cl.mem_flags
        self.a, self.b = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                    hostbuf=rng.random(N + 64).astype(np.float32))
                          for _ in range(2))
        self.out = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR,
                             hostbuf=np.zeros(N + 64, np.float32))
        self.gsize = gsize

    def run(self) -> None:
        self.kernel(self.queue, self.gsize, None, self.a, self.b, self.out)
        self.queue.finish()

    def result(self) -> np.ndarray:
        host = np.empty(N + 64, np.float32)
        self.cl.enqueue_copy(self.queue, host, self.out)
        self.queue.finish()
        return host


def _pocl() -> Any | None:
    os.environ.setdefault("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    try:
        import pyopencl
        pyopencl.get_platforms()
    except Exception:
        return None
    return pyopencl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    names = pick_names(args.only, list(KERNELS))
    if names is None:
        raise SystemExit(2)
    pocl = _pocl()
    ctx = ppcl.Context([ppcl.get_platforms()[0].get_devices()[0]])
    pocl_ctx = pocl.create_some_context(interactive=False) if pocl is not None else None
    print(f"{'kernel':<18} {'branch-free':>17} {'-ppcl-no-selects':>17} {'pocl':>17} "
          f"{'gain':>6} {'pocl/ppcl':>9}  (ms, min / median)")
    for name in names:
        source, gsize = KERNELS[name]
        columns = {"with": Column(ppcl, ctx, source, gsize),
                   "without": Column(ppcl, ctx, source, gsize, "-ppcl-no-selects")}
        if pocl is not None:
            columns["pocl"] = Column(pocl, pocl_ctx, source, gsize)
        actions: dict[str, Callable[[], None]] = {k: c.run for k, c in columns.items()}
        measured = measure_in_turns(actions, repeats=args.repeats, run_length=3)
        results = {k: c.result() for k, c in columns.items()}
        same = bool(np.array_equal(results["with"], results["without"]))
        close = pocl is None or bool(np.allclose(results["with"], results["pocl"],
                                                 rtol=1e-5, atol=1e-6))
        cells = []
        for key in ("with", "without", "pocl"):
            if key in measured:
                t = measured[key].timing
                cells.append(f"{t.min_s * 1e3:7.3f} / {t.median_s * 1e3:7.3f}")
            else:
                cells.append(f"{'-':>17}")
        gain = measured["without"].timing.median_s / measured["with"].timing.median_s
        versus = (f"{measured['pocl'].timing.median_s / measured['with'].timing.median_s:8.2f}x"
                  if "pocl" in measured else f"{'-':>9}")
        check = "ok" if same and close else "MISMATCH"
        print(f"{name:<18} {cells[0]:>17} {cells[1]:>17} {cells[2]:>17} {gain:5.2f}x {versus}"
              f"  {check}", flush=True)
    if pocl is None:
        print("(pocl column skipped: pyopencl is not importable or has no platform; install "
              "pocl-opencl-icd and set OCL_ICD_VENDORS=/etc/OpenCL/vendors)")


if __name__ == "__main__":
    main()
