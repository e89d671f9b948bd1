"""A compiler pass on and off on one-kernel programs, beside pocl: the runner of
``benchmarks.short_loops``, ``benchmarks.branch_free`` and ``benchmarks.varying_loops``.

Each kernel ``k(a, b, o)`` reads two buffers of ``N`` random floats and writes the third; it is
built on ppcl's CPU device with the pass (no option) and without it (the pass's build option),
and on pocl through pyopencl when it is there. The three columns are timed in turns
(``ppcl.timing.measure_in_turns``), min and median; the two ppcl builds must agree exactly and
pocl's result closely (or as the benchmark says).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import ppcl
from benchmarks.names import pick_names
from ppcl.timing import measure_in_turns

N = 1 << 20


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


def pocl_module() -> Any | None:
    """pyopencl when it imports and finds a platform (Debian's pocl with
    ``OCL_ICD_VENDORS=/etc/OpenCL/vendors``), else None."""
    os.environ.setdefault("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    try:
        import pyopencl
        pyopencl.get_platforms()
    except Exception:
        return None
    return pyopencl


def _close(ours: np.ndarray, theirs: np.ndarray) -> bool:
    return bool(np.allclose(ours, theirs, rtol=1e-5, atol=1e-6))


def main(kernels: Mapping[str, tuple[str, tuple[int, ...]]], option: str, label: str,
         description: str, agree: Callable[[np.ndarray, np.ndarray], bool] = _close) -> None:
    """Time ``kernels`` (name: source, global size) with the pass (column ``label``), with
    ``option`` and on pocl, and print a row per kernel; ``agree(ours, pocl's)`` checks the
    results."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    names = pick_names(args.only, list(kernels))
    if names is None:
        raise SystemExit(2)
    pocl = pocl_module()
    ctx = ppcl.Context([ppcl.get_platforms()[0].get_devices()[0]])
    pocl_ctx = pocl.create_some_context(interactive=False) if pocl is not None else None
    print(f"{'kernel':<20} {label:>17} {option:>17} {'pocl':>17} "
          f"{'gain':>6} {'pocl/ppcl':>9}  (ms, min / median)")
    for name in names:
        source, gsize = kernels[name]
        columns = {"with": Column(ppcl, ctx, source, gsize),
                   "without": Column(ppcl, ctx, source, gsize, option)}
        if pocl is not None:
            columns["pocl"] = Column(pocl, pocl_ctx, source, gsize)
        actions: dict[str, Callable[[], None]] = {k: c.run for k, c in columns.items()}
        measured = measure_in_turns(actions, repeats=args.repeats, run_length=3)
        results = {k: c.result() for k, c in columns.items()}
        same = bool(np.array_equal(results["with"], results["without"]))
        close = pocl is None or agree(results["with"], results["pocl"])
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
        print(f"{name:<20} {cells[0]:>17} {cells[1]:>17} {cells[2]:>17} {gain:5.2f}x {versus}"
              f"  {check}", flush=True)
    if pocl is None:
        print("(pocl column skipped: pyopencl is not importable or has no platform; install "
              "pocl-opencl-icd and set OCL_ICD_VENDORS=/etc/OpenCL/vendors)")
