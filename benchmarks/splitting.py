"""Input space splitting: kernels whose control or addresses depend on where a work-item lies,
timed on ppcl with splitting, on ppcl built with ``-ppcl-no-split`` and on pocl (through
pyopencl, when it is installed: ``OCL_ICD_VENDORS=/etc/OpenCL/vendors``), in one run.

``python3 -m benchmarks.splitting [--size small|default] [--repeats N]`` prints one line per
kernel: the median times and the ratios of ppcl with splitting over the two others. Every
result is checked against ppcl without splitting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.programs.filters import CONV2D_SOURCE
from ppcl.timing import measure

CLAMPED = """
#define R 2
__kernel void blur(__global const float *in, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int dy = -R; dy <= R; dy++) {
        int yy = clamp(y + dy, 0, h - 1);
        for (int dx = -R; dx <= R; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            s += in[yy * w + xx];
        }
    }
    out[y * w + x] = s * (1.0f / ((2 * R + 1) * (2 * R + 1)));
}
"""

STENCIL = """
__kernel void stencil(__global const float *a, __global float *b, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > 0 && j > 0 && i < ni - 1 && j < nj - 1)
        b[i * nj + j] = 0.5f * a[i * nj + j] + 0.125f * (a[(i - 1) * nj + j]
            + a[(i + 1) * nj + j] + a[i * nj + j - 1] + a[i * nj + j + 1]);
}
"""

FIR = """
__kernel void fir(__global const float *x, __global const float *h, __global float *y,
                  int n, int taps)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < min(i + 1, taps); k++)
        s += h[k] * x[i - k];
    y[i] = s;
}
"""


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    kernel: str
    arrays: Callable[[np.random.Generator], list[np.ndarray]]
    scalars: tuple[Any, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]


def _round(n: int, k: int) -> int:
    return (n + k - 1) // k * k


def cases(size: str) -> list[Case]:
    n2 = 512 if size == "small" else 2048
    n1 = 1 << 16 if size == "small" else 1 << 22
    taps = 32

    def image(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.random(n2 * n2, dtype=np.float32), np.zeros(n2 * n2, dtype=np.float32)]

    def signal(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.random(n1, dtype=np.float32), rng.random(taps, dtype=np.float32),
                np.zeros(n1, dtype=np.float32)]

    two = (_round(n2, 32), _round(n2, 8))
    i32 = np.int32
    return [
        Case("clamped 5x5 convolution", CLAMPED, "blur", image, (i32(n2), i32(n2)), two,
             (32, 8)),
        Case("guarded 5-point stencil", STENCIL, "stencil", image, (i32(n2), i32(n2)), two,
             (32, 8)),
        Case("FIR, id-dependent bound", FIR, "fir", signal, (i32(n1), i32(taps)), (n1,),
             (64,)),
        Case("conv2d (second suite)", CONV2D_SOURCE, "conv2d_kernel", image,
             (i32(n2), i32(n2)), two, (32, 8)),
    ]


def _runner(cl: Any, ctx: Any, case: Case, options: str,
            arrays: list[np.ndarray]) -> Callable[[], np.ndarray]:
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, case.source).build(options)
    kernel = getattr(program, case.kernel)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    bufs = [cl.Buffer(ctx, flags, hostbuf=a) for a in arrays]
    out = np.empty_like(arrays[-1])

    def action() -> np.ndarray:
        kernel(queue, case.global_size, case.local_size, *bufs, *case.scalars)
        queue.finish()
        return out

    def result() -> np.ndarray:
        cl.enqueue_copy(queue, out, bufs[-1])
        queue.finish()
        return out.copy()

    action.result = result  # type: ignore[attr-defined]
    return action


def _pocl() -> tuple[Any, Any] | None:
    try:
        import pyopencl
    except ImportError:
        return None
    try:
        platforms = pyopencl.get_platforms()
    except pyopencl.Error:  # an ICD loader with no platform behind it: no pocl column
        return None
    for platform in platforms:
        if "portable" in platform.name.lower() or "pocl" in platform.name.lower():
            return pyopencl, pyopencl.Context(platform.get_devices())
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.splitting")
    parser.add_argument("--size", choices=("small", "default"), default="default")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    import ppcl

    ctx = ppcl.Context(ppcl.get_platforms()[0].get_devices()[:1])
    pocl = _pocl()
    print(f"{'kernel':28} {'split ms':>9} {'no split':>9} {'pocl':>9} {'vs no split':>12} "
          f"{'vs pocl':>8}")
    for case in cases(args.size):
        rng = np.random.default_rng(1)
        inputs = case.arrays(rng)
        times: dict[str, float] = {}
        results: dict[str, np.ndarray] = {}
        runs = [("split", ppcl, ctx, ""), ("plain", ppcl, ctx, "-ppcl-no-split")]
        if pocl is not None:
            runs.append(("pocl", pocl[0], pocl[1], ""))
        for label, cl, context, options in runs:
            action = _runner(cl, context, case, options, [a.copy() for a in inputs])
            times[label] = measure(action, repeats=args.repeats).timing.median_s
            results[label] = action.result()  # type: ignore[attr-defined]
        np.testing.assert_allclose(results["split"], results["plain"], rtol=1e-5, atol=1e-5)
        pocl_ms = f"{times['pocl'] * 1e3:9.3f}" if "pocl" in times else f"{'-':>9}"
        vs_pocl = f"{times['pocl'] / times['split']:7.2f}x" if "pocl" in times else f"{'-':>8}"
        print(f"{case.name:28} {times['split'] * 1e3:9.3f} {times['plain'] * 1e3:9.3f} "
              f"{pocl_ms} {times['plain'] / times['split']:11.2f}x {vs_pocl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
