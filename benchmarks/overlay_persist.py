"""The overlay's first replay in a fresh process, with and without the plans and generated
programs an earlier process stored on disk (``ppcl/overlay/persist.py``).

Each sample is a new Python process on one kernel cache (a temporary directory, warmed first,
so the C compiler never runs): "without" removes the overlay's entries before the process
starts, as ppcl did before they were kept (the plan analysed and the generated kernels parsed
again), "with" leaves them. The times are of the first and second call of the pattern (the
second replay specializes scalars, a plan of its own) and of a later call for reference.
Results of every process must be identical.

    python -m benchmarks.overlay_persist [--size S] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ("sobel", "time steps")


def child(pattern: str, size: int) -> None:
    """One fresh process: the pattern four times, each call timed."""
    import numpy as np

    import ppcl as cl
    from benchmarks.overlay import SOURCE, sobel, time_steps

    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    prg = cl.Program(ctx, SOURCE).build()
    queue = cl.CommandQueue(ctx)
    cl.overlay.enable(queue)
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (size, size, 4), dtype=np.uint8)
    frame = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, rgb.nbytes)
    u0 = rng.random((size, size), dtype=np.float32)
    times = []
    result = None
    for _ in range(4):
        start = time.perf_counter()
        if pattern == "sobel":
            result = sobel(ctx, queue, prg, rgb, frame)
        else:
            result = time_steps(ctx, queue, prg, u0, 4)
        times.append((time.perf_counter() - start) * 1e3)
    assert result is not None
    print(json.dumps({"times": times, "sum": float(np.sum(result, dtype=np.float64))}))


def sample(pattern: str, size: int, cache: Path) -> dict:
    env = dict(os.environ, PPCL_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("PPCL_OVERLAY", None)
    done = subprocess.run([sys.executable, "-m", "benchmarks.overlay_persist", "--child",
                           pattern, "--size", str(size)], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT, stdin=subprocess.DEVNULL)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="image side")
    parser.add_argument("--runs", type=int, default=5, help="processes per side")
    parser.add_argument("--child", choices=PATTERNS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.size)
        return
    with tempfile.TemporaryDirectory(prefix="ppcl-bench-persist-") as folder:
        cache = Path(folder)
        for pattern in PATTERNS:
            sample(pattern, args.size, cache)  # warms the C objects and the overlay entries
            sides: dict[str, list[list[float]]] = {"without": [], "with": []}
            sums = set()
            for _ in range(args.runs):  # in turns, the machine may be shared
                for side in sides:
                    if side == "without":
                        shutil.rmtree(cache / "overlay", ignore_errors=True)
                    got = sample(pattern, args.size, cache)
                    sides[side].append(got["times"])
                    sums.add(got["sum"])
            cells = []
            for side, runs in sides.items():
                best = [min(run[i] for run in runs) for i in range(4)]
                cells.append(f"{side} stored plans: 1st {best[0]:7.1f}  2nd {best[1]:7.1f}  "
                             f"4th {best[3]:5.1f} ms")
            print(f"{pattern:10s} {' | '.join(cells)}  identical: {len(sums) == 1}", flush=True)
            if len(sums) != 1:
                raise SystemExit("results differ between processes")


if __name__ == "__main__":
    main()
