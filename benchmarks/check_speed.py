"""How fast the checking device checks: the two targets of its issue, measured.

- saxpy over 1M work-items (local size 256): target under 2 s;
- the suite's tiled sgemm (``sgemm_tiled``, 16x16 tiles in ``__local`` memory, two barriers
  per tile) at 256x256: target under 30 s.

Each is run once on the checking device (a check is a one-off, so the first run is what a
user waits for, the program build excluded), its result compared with numpy, and the time
printed with the target. ``python -m benchmarks.check_speed``.
"""

from __future__ import annotations

import time

import numpy as np

import ppcl as cl
import ppcl.runtime.platform
from ppcl.bench_source import SOURCE
from ppcl.devices.check import CheckDevice

SAXPY_ITEMS = 1 << 20
SGEMM_N = 256


def _context() -> tuple[cl.Context, cl.CommandQueue]:
    device = ppcl.runtime.platform.Device(cl.get_platforms()[0], CheckDevice())
    context = cl.Context([device])
    return context, cl.CommandQueue(context)


def _buffer(context: cl.Context, array: np.ndarray) -> cl.Buffer:
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    return cl.Buffer(context, flags, hostbuf=array)


def check_saxpy(program: cl.Program, context: cl.Context, queue: cl.CommandQueue) -> float:
    rng = np.random.default_rng(1)
    x = rng.random(SAXPY_ITEMS, dtype=np.float32)
    y = rng.random(SAXPY_ITEMS, dtype=np.float32)
    out = np.empty_like(x)
    bx, by, bout = _buffer(context, x), _buffer(context, y), _buffer(context, out)
    start = time.perf_counter()
    program.saxpy(queue, (SAXPY_ITEMS,), (256,), np.float32(2.0), bx, by, bout,
                  np.int32(SAXPY_ITEMS))
    queue.finish()
    elapsed = time.perf_counter() - start
    cl.enqueue_copy(queue, out, bout)
    if not np.array_equal(out, np.float32(2.0) * x + y):
        raise SystemExit("saxpy on the checking device differs from numpy")
    return elapsed


def check_sgemm(program: cl.Program, context: cl.Context, queue: cl.CommandQueue) -> float:
    rng = np.random.default_rng(2)
    n = SGEMM_N
    a = rng.random((n, n), dtype=np.float32) - 0.5
    b = rng.random((n, n), dtype=np.float32) - 0.5
    c = np.empty((n, n), np.float32)
    ba, bb, bc = _buffer(context, a), _buffer(context, b), _buffer(context, c)
    start = time.perf_counter()
    program.sgemm_tiled(queue, (n, n), (16, 16), np.int32(n), np.int32(n), np.int32(n),
                        ba, bb, bc)
    queue.finish()
    elapsed = time.perf_counter() - start
    cl.enqueue_copy(queue, c, bc)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if not np.allclose(c, want, rtol=1e-4, atol=1e-3):
        raise SystemExit("sgemm_tiled on the checking device differs from numpy")
    return elapsed


def main() -> None:
    context, queue = _context()
    program = cl.Program(context, SOURCE).build()
    saxpy = check_saxpy(program, context, queue)
    print(f"saxpy, {SAXPY_ITEMS} work-items: {saxpy:.2f} s checked (target < 2 s)")
    sgemm = check_sgemm(program, context, queue)
    print(f"sgemm_tiled, {SGEMM_N}x{SGEMM_N} (16x16 tiles, barriers): {sgemm:.2f} s checked "
          "(target < 30 s)")


if __name__ == "__main__":
    main()
