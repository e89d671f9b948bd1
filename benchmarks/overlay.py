"""The command overlay on and off, in the same run, on the CPU device.

Five host programs written as an OpenCL program would be, with no knowledge of the overlay:
a Sobel-style pipeline (grayscale, two gradients, magnitude), a matrix expression whose number
of operands is chosen on the command line (sum of element-wise products of N matrix pairs), a
Laplacian pyramid blend of two images (hundreds of small launches), a time-step loop of a
stencil and an update kernel, and one program the overlay cannot improve (one compute-heavy
kernel, each result read at once). Each runs on a plain queue and on a queue with
``ppcl.overlay.enable``, the two timed in turns; the results must be identical. Each row
prints the minimum / median time of each, and the ratios off/on of the minima (judged
against the target) / of the medians.

``--vendor [NAME]`` runs the same programs on another OpenCL platform through pyopencl
(``ppcl.overlay.over``: the platform named like NAME, by default pyopencl's first), e.g. pocl
with ``OCL_ICD_VENDORS=/etc/OpenCL/vendors``; without pyopencl or a platform it says so and
stops.

    python -m benchmarks.overlay [--operands N] [--size S] [--vendor [NAME]]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import ppcl as cl
from ppcl.timing import measure_in_turns

mf = cl.mem_flags
ROUNDS = 15  # timed runs of each column, in turns

SOURCE = """
__kernel void gray(__global const uchar4 *rgb, __global float *g, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    float4 p = convert_float4(rgb[i]);
    g[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
}

__kernel void sobel_x(__global const float *g, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    int yu = max(y - 1, 0), yd = min(y + 1, h - 1);
    out[y * w + x] = (g[yu * w + xr] + 2.0f * g[y * w + xr] + g[yd * w + xr])
                   - (g[yu * w + xl] + 2.0f * g[y * w + xl] + g[yd * w + xl]);
}

__kernel void sobel_y(__global const float *g, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    int yu = max(y - 1, 0), yd = min(y + 1, h - 1);
    out[y * w + x] = (g[yd * w + xl] + 2.0f * g[yd * w + x] + g[yd * w + xr])
                   - (g[yu * w + xl] + 2.0f * g[yu * w + x] + g[yu * w + xr]);
}

__kernel void magnitude(__global const float *gx, __global const float *gy,
                        __global float *m, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    m[i] = sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
}

__kernel void mul(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);
    c[i] = a[i] * b[i];
}

__kernel void add(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void down(__global const float *src, __global float *dst, int w)
{
    int x = get_global_id(0), y = get_global_id(1), n = get_global_size(0);
    int s = 2 * y * w + 2 * x;
    dst[y * n + x] = 0.25f * (src[s] + src[s + 1] + src[s + w] + src[s + w + 1]);
}

__kernel void up(__global const float *src, __global float *dst, int w)
{
    int x = get_global_id(0), y = get_global_id(1), n = get_global_size(0);
    dst[y * n + x] = src[(y / 2) * w + x / 2];
}

__kernel void sub(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    c[i] = a[i] - b[i];
}

__kernel void blend(__global const float *m, __global const float *a,
                    __global const float *b, __global float *out)
{
    int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    out[i] = m[i] * a[i] + (1.0f - m[i]) * b[i];
}

__kernel void laplace(__global const float *u, __global float *l, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    int yu = max(y - 1, 0), yd = min(y + 1, h - 1);
    l[y * w + x] = u[y * w + xl] + u[y * w + xr] + u[yu * w + x] + u[yd * w + x]
                 - 4.0f * u[y * w + x];
}

__kernel void update(__global const float *u, __global const float *l, __global float *v,
                     float dt, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    v[i] = u[i] + dt * l[i];
}

__kernel void heavy(__global const float *a, __global float *b, int rounds)
{
    int i = get_global_id(0);
    float v = a[i];
    for (int r = 0; r < rounds; r++) v = v * 0.9999f + 0.0001f;
    b[i] = v;
}
"""


def temp(ctx: cl.Context, nbytes: int) -> cl.Buffer:
    return cl.Buffer(ctx, mf.READ_WRITE, nbytes)


def sobel(ctx: cl.Context, queue: cl.CommandQueue, prg: cl.Program, rgb: np.ndarray,
          src: cl.Buffer) -> np.ndarray:
    """One frame: written to the device, filtered through temporaries, read back."""
    h, w = rgb.shape[:2]
    n = w * h * 4
    cl.enqueue_copy(queue, src, rgb, is_blocking=False)
    g, gx, gy, m = temp(ctx, n), temp(ctx, n), temp(ctx, n), temp(ctx, n)
    prg.gray(queue, (w, h), None, src, g, np.int32(w))
    prg.sobel_x(queue, (w, h), None, g, gx, np.int32(w), np.int32(h))
    prg.sobel_y(queue, (w, h), None, g, gy, np.int32(w), np.int32(h))
    prg.magnitude(queue, (w, h), None, gx, gy, m, np.int32(w))
    for buf in (g, gx, gy):
        buf.release()
    out = np.empty((h, w), np.float32)
    cl.enqueue_copy(queue, out, m)
    m.release()
    return out


def matrix_expression(ctx: cl.Context, queue: cl.CommandQueue, prg: cl.Program,
                      pairs: list[tuple[cl.Buffer, cl.Buffer]], size: int) -> np.ndarray:
    """sum over k of A_k * B_k, one kernel per operation, as a run-time composed expression
    library would issue it."""
    n = size * size
    total: cl.Buffer | None = None
    for a, b in pairs:
        product = temp(ctx, n * 4)
        prg.mul(queue, (n,), None, a, b, product)
        if total is None:
            total = product
            continue
        new_total = temp(ctx, n * 4)
        prg.add(queue, (n,), None, total, product, new_total)
        total.release()
        product.release()
        total = new_total
    assert total is not None
    out = np.empty((size, size), np.float32)
    cl.enqueue_copy(queue, out, total)
    total.release()
    return out


def pyramid_blend(ctx: cl.Context, queue: cl.CommandQueue, prg: cl.Program,
                  images: tuple[cl.Buffer, cl.Buffer, cl.Buffer], size: int,
                  levels: int) -> np.ndarray:
    """Blend two images level by level of their Laplacian pyramids under a mask pyramid."""
    a, b, m = images
    out_levels = []
    temps: list[cl.Buffer] = []
    w = size
    for _ in range(levels):
        half = w // 2
        nbytes = half * half * 4
        a2, b2, m2 = temp(ctx, nbytes), temp(ctx, nbytes), temp(ctx, nbytes)
        for src, dst in ((a, a2), (b, b2), (m, m2)):
            prg.down(queue, (half, half), None, src, dst, np.int32(w))
        ua, ub = temp(ctx, w * w * 4), temp(ctx, w * w * 4)
        la, lb, out = temp(ctx, w * w * 4), temp(ctx, w * w * 4), temp(ctx, w * w * 4)
        prg.up(queue, (w, w), None, a2, ua, np.int32(half))  # the Laplacian level of a
        prg.sub(queue, (w, w), None, a, ua, la)
        prg.up(queue, (w, w), None, b2, ub, np.int32(half))  # and of b
        prg.sub(queue, (w, w), None, b, ub, lb)
        prg.blend(queue, (w, w), None, m, la, lb, out)
        for buf in (ua, ub, la, lb):
            buf.release()
        out_levels.append((out, w))
        temps.extend((a2, b2, m2))
        a, b, m, w = a2, b2, m2, half
    result = np.empty(sum(n * n for _, n in out_levels), np.float32)
    offset = 0
    for out, n in out_levels:
        cl.enqueue_copy(queue, result[offset:offset + n * n], out)
        offset += n * n
        out.release()
    for buf in temps:
        buf.release()
    return result


def time_steps(ctx: cl.Context, queue: cl.CommandQueue, prg: cl.Program, u0: np.ndarray,
               steps: int) -> np.ndarray:
    h, w = u0.shape
    u = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=u0)
    v, lap = temp(ctx, u0.nbytes), temp(ctx, u0.nbytes)
    for _ in range(steps):
        prg.laplace(queue, (w, h), None, u, lap, np.int32(w), np.int32(h))
        prg.update(queue, (w, h), None, u, lap, v, np.float32(0.2), np.int32(w))
        u, v = v, u
    lap.release()
    out = np.empty_like(u0)
    cl.enqueue_copy(queue, out, u)
    return out


def heavy(ctx: cl.Context, queue: cl.CommandQueue, prg: cl.Program, src: cl.Buffer,
          n: int, rounds: int) -> np.ndarray:
    out_buf = temp(ctx, n * 4)
    prg.heavy(queue, (n,), None, src, out_buf, np.int32(rounds))
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, out_buf)
    out_buf.release()
    return out


def read_each(queue: cl.CommandQueue, prg: cl.Program, a: cl.Buffer, b: cl.Buffer,
              n: int, launches: int) -> np.ndarray:
    """Small launches, each result read at once: nothing to delay."""
    out = np.empty((launches, n), np.float32)
    for k in range(launches):
        prg.mul(queue, (n,), None, a, a if k % 2 else b, b)
        cl.enqueue_copy(queue, out[k], b)
    return out


def compare(name: str, target: float, run: Callable[[cl.CommandQueue], np.ndarray],
            plain: cl.CommandQueue, overlaid: cl.CommandQueue) -> tuple[str, float, bool]:
    """Off and on timed in turns (``measure_in_turns``: on a shared machine a disturbance, a
    busy core or a slower clock, falls on both alike, where timing each in its own block let
    one block catch it all), each warmed up first; the ratio is of the minima, the medians'
    ratio is printed beside it."""
    measured = measure_in_turns({"off": lambda: run(plain), "on": lambda: run(overlaid)},
                                repeats=ROUNDS)
    off, on = measured["off"], measured["on"]
    same = bool(np.array_equal(off.result, on.result))
    ratio = off.timing.min_s / on.timing.min_s
    median_ratio = off.timing.median_s / on.timing.median_s
    print(f"{name:34s} off {off.timing.min_s * 1e3:7.2f} / {off.timing.median_s * 1e3:7.2f} ms"
          f"  on {on.timing.min_s * 1e3:7.2f} / {on.timing.median_s * 1e3:7.2f} ms"
          f"  {ratio:5.2f}x / {median_ratio:5.2f}x (target {target:.2f}x)  identical: {same}",
          flush=True)
    return name, ratio, same


def context(vendor: str | None) -> cl.Context | None:
    """The CPU device's context, or a context over a pyopencl platform whose queues record only
    where ``enable`` says, as on the CPU device; None, said why, when there is no such
    platform."""
    if vendor is None:
        return cl.Context([cl.get_platforms()[0].get_devices()[0]])
    try:
        ctx = cl.overlay.over(vendor, record=False)
    except cl.Error as error:
        print(f"skipped: no vendor platform to measure on ({error})")
        return None
    print(f"on {ctx.devices[0].platform.name}: {ctx.devices[0].name}")
    return ctx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operands", type=int, default=8, help="matrix pairs in the sum")
    parser.add_argument("--size", type=int, default=1024, help="image and matrix side")
    parser.add_argument("--vendor", nargs="?", const="", default=None, metavar="NAME",
                        help="run on an OpenCL platform through pyopencl (e.g. pocl)")
    args = parser.parse_args()
    ctx = context(args.vendor)
    if ctx is None:
        return
    prg = cl.Program(ctx, SOURCE).build()
    plain = cl.CommandQueue(ctx)
    overlaid = cl.CommandQueue(ctx)
    cl.overlay.enable(overlaid)
    rng = np.random.default_rng(0)
    size = args.size

    rgb = rng.integers(0, 256, (size, size, 4), dtype=np.uint8)
    frame = cl.Buffer(ctx, mf.READ_ONLY, rgb.nbytes)
    pairs = [(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                        hostbuf=rng.random(size * size, dtype=np.float32)),
              cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                        hostbuf=rng.random(size * size, dtype=np.float32)))
             for _ in range(args.operands)]
    images = tuple(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                             hostbuf=rng.random(size * size, dtype=np.float32))
                   for _ in range(3))
    u0 = rng.random((size, size), dtype=np.float32)
    small_a, small_b = (cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                  hostbuf=rng.random(1024, dtype=np.float32) + 0.5)
                        for _ in range(2))
    heavy_src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                          hostbuf=rng.random(size * size, dtype=np.float32))

    rows = [
        compare("sobel pipeline", 1.8, lambda q: sobel(ctx, q, prg, rgb, frame), plain, overlaid),
        compare(f"matrix expression (N={args.operands})", 2.5,
                lambda q: matrix_expression(ctx, q, prg, pairs, size), plain, overlaid),
        compare("pyramid blend (x8 frames)", 1.3,
                lambda q: np.concatenate([pyramid_blend(ctx, q, prg, images, size, 6)
                                          for _ in range(8)]),  # type: ignore[arg-type]
                plain, overlaid),
        compare("time steps (stencil+update x50)", 1.3,
                lambda q: time_steps(ctx, q, prg, u0, 50), plain, overlaid),
        compare("no gain (read after each launch)", 0.97,
                lambda q: read_each(q, prg, small_a, small_b, 1024, 200), plain, overlaid),
        compare("no gain (one heavy kernel)", 0.97,
                lambda q: heavy(ctx, q, prg, heavy_src, size * size, 200), plain, overlaid),
    ]
    if not all(same for _, _, same in rows):
        raise SystemExit("results differ with the overlay on")


if __name__ == "__main__":
    main()
