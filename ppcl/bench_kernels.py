"""The kernels of the benchmark suite (``ppcl bench``), with their inputs and numpy references.

Every kernel sits in one OpenCL C 1.2 program, ``SOURCE``, so that the suite also measures the
build of a realistic multi-kernel program. A benchmark is a ``Case``: named input arrays copied
to the device, output and scratch buffers, the launches one run makes (in order), a check of the
outputs against numpy, and the bytes and floating-point operations one run needs at least (for
GB/s and GFLOP/s). Cases are made by ``make_case(name, size, rng)``; ``size`` is ``"small"``
(seconds for the whole suite, for tests) or ``"default"`` (the sizes the targets are quoted at).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

TILE = 16  # sgemm and transpose tile edge
REDUCE_LOCAL = 256
SCAN_LOCAL = 256
SCAN_PER_ITEM = 4
SCAN_BLOCK = SCAN_LOCAL * SCAN_PER_ITEM
HIST_BINS = 256
HIST_LOCAL = 256

SOURCE = f"""
#define TILE {TILE}
#define REDUCE_LOCAL {REDUCE_LOCAL}
#define SCAN_LOCAL {SCAN_LOCAL}
#define SCAN_PER_ITEM {SCAN_PER_ITEM}
#define HIST_BINS {HIST_BINS}
""" + r"""
__kernel void empty(__global int *unused)
{
}

/* out = a * x + y */
__kernel void saxpy(const float a, __global const float *x, __global const float *y,
                    __global float *out, const int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = a * x[i] + y[i];
}

/* C (M x N) = A (M x K) * B (K x N), row-major, one work-item per element of C. */
__kernel void sgemm_naive(const int M, const int N, const int K,
                          __global const float *A, __global const float *B, __global float *C)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

/* The same product through TILE x TILE tiles of A and B staged in local memory.
   M, N and K are multiples of TILE (the host checks). */
__kernel void sgemm_tiled(const int M, const int N, const int K,
                          __global const float *A, __global const float *B, __global float *C)
{
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int col = get_group_id(0) * TILE + tx;
    int row = get_group_id(1) * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = A[row * K + t + tx];
        Bs[ty][tx] = B[(t + ty) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}

/* Tree reduction in local memory: one partial sum per work-group, summed on the host. */
__kernel void reduce_sum(__global const float *x, __global float *partial, const int n)
{
    __local float scratch[REDUCE_LOCAL];
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    scratch[lid] = gid < n ? x[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = REDUCE_LOCAL / 2; stride > 0; stride >>= 1) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}

/* Inclusive scan of one block of SCAN_LOCAL * SCAN_PER_ITEM elements: each work-item scans
   its SCAN_PER_ITEM consecutive elements, the work-group scans the per-item totals
   (Hillis-Steele in local memory), and the block total goes to block_sums. */
__kernel void scan_block(__global const int *in, __global int *out, __global int *block_sums,
                         const int n)
{
    __local int totals[SCAN_LOCAL];
    int lid = get_local_id(0);
    int base = get_global_id(0) * SCAN_PER_ITEM;
    int running[SCAN_PER_ITEM];
    int sum = 0;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        sum += idx < n ? in[idx] : 0;
        running[j] = sum;
    }
    totals[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int offset = 1; offset < SCAN_LOCAL; offset <<= 1) {
        int addend = lid >= offset ? totals[lid - offset] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        totals[lid] += addend;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int prefix = lid > 0 ? totals[lid - 1] : 0;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        if (idx < n)
            out[idx] = running[j] + prefix;
    }
    if (lid == SCAN_LOCAL - 1)
        block_sums[get_group_id(0)] = totals[lid];
}

/* Adds the scanned totals of the blocks before each block (block sums pass of the scan). */
__kernel void scan_add(__global int *out, __global const int *scanned_block_sums, const int n)
{
    int group = get_group_id(0);
    if (group == 0)
        return;
    int addend = scanned_block_sums[group - 1];
    int base = get_global_id(0) * SCAN_PER_ITEM;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        if (idx < n)
            out[idx] += addend;
    }
}

/* out (cols x rows) = transpose of in (rows x cols), through a padded local tile. */
__kernel void transpose(__global const float *in, __global float *out,
                        const int rows, const int cols)
{
    __local float tile[TILE][TILE + 1];
    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int x = get_group_id(0) * TILE + lx;
    int y = get_group_id(1) * TILE + ly;
    if (x < cols && y < rows)
        tile[ly][lx] = in[y * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int out_x = get_group_id(1) * TILE + lx;
    int out_y = get_group_id(0) * TILE + ly;
    if (out_x < rows && out_y < cols)
        out[out_y * rows + out_x] = tile[lx][ly];
}

/* 5x5 convolution, borders clamped to the nearest pixel. */
__kernel void conv2d_5x5(__global const float *in, __constant float *filter,
                         __global float *out, const int width, const int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            acc += filter[(dy + 2) * 5 + (dx + 2)] * in[yy * width + xx];
        }
    }
    out[y * width + x] = acc;
}

/* 7-point stencil on an nx x ny x nz grid; boundary points are copied. */
__kernel void stencil7(__global const float *in, __global float *out,
                       const int nx, const int ny, const int nz,
                       const float c0, const float c1)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    int plane = nx * ny;
    int idx = z * plane + y * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = c0 * in[idx]
             + c1 * (in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx]
                     + in[idx - plane] + in[idx + plane]);
}

/* One explicit Euler step of an all-pairs gravitational n-body system; w holds the mass. */
__kernel void nbody_step(__global const float4 *pos, __global const float4 *vel,
                         __global float4 *new_pos, __global float4 *new_vel,
                         const int n, const float dt, const float eps2)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pos[i];
    float4 acc = (float4)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float4 d = (float4)(q.x - p.x, q.y - p.y, q.z - p.z, 0.0f);
        float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
        float inv_r = rsqrt(r2);
        acc += (q.w * inv_r * inv_r * inv_r) * d;
    }
    float4 v = vel[i] + dt * acc;
    float4 moved = p + dt * v;
    moved.w = p.w;
    new_vel[i] = v;
    new_pos[i] = moved;
}

/* Cumulative normal distribution, Abramowitz-Stegun polynomial. */
float cnd(float d)
{
    const float a1 = 0.31938153f;
    const float a2 = -0.356563782f;
    const float a3 = 1.781477937f;
    const float a4 = -1.821255978f;
    const float a5 = 1.330274429f;
    const float rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = rsqrt2pi * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}

/* European call and put prices. */
__kernel void black_scholes(__global const float *spot, __global const float *strike,
                            __global const float *years, __global float *call,
                            __global float *put, const float rate, const float volatility,
                            const int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float s = spot[i];
    float x = strike[i];
    float t = years[i];
    float sqrt_t = sqrt(t);
    float d1 = (log(s / x) + (rate + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
    float d2 = d1 - volatility * sqrt_t;
    float discounted = x * exp(-rate * t);
    call[i] = s * cnd(d1) - discounted * cnd(d2);
    put[i] = discounted * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}

__kernel void zero_uint(__global uint *data, const int n)
{
    int i = get_global_id(0);
    if (i < n)
        data[i] = 0;
}

/* 256-bin histogram: per-work-group bins in local memory, then merged into global bins. */
__kernel void histogram256(__global const uchar *data, __global uint *bins, const int n)
{
    __local uint local_bins[HIST_BINS];
    int lid = get_local_id(0);
    for (int b = lid; b < HIST_BINS; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < HIST_BINS; b += get_local_size(0)) {
        uint count = local_bins[b];
        if (count != 0)
            atomic_add(&bins[b], count);
    }
}

/* y = A x for A in compressed sparse row form, one work-item per row. */
__kernel void spmv_csr(const int rows, __global const int *row_start,
                       __global const int *columns, __global const float *values,
                       __global const float *x, __global float *y)
{
    int row = get_global_id(0);
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = row_start[row]; k < row_start[row + 1]; ++k)
        acc += values[k] * x[columns[k]];
    y[row] = acc;
}

/* y = A x for a dense row-major rows x cols matrix, one work-item per row. */
__kernel void gemv(const int rows, const int cols, __global const float *A,
                   __global const float *x, __global float *y)
{
    int row = get_global_id(0);
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
        acc += A[row * cols + k] * x[k];
    y[row] = acc;
}
"""

Scalar = np.int32 | np.float32
Arg = str | Scalar  # a str names a buffer of the case
Check = Callable[[dict[str, np.ndarray]], str | None]


@dataclass(frozen=True)
class Launch:
    """One kernel launch: a kernel of ``SOURCE``, its NDRange and its arguments."""

    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    args: tuple[Arg, ...]


@dataclass
class Case:
    """One benchmark: device buffers, the launches of one run, and the check of its result.

    ``inputs`` are copied to the device once; ``outputs`` are read back after a run and given to
    ``check``, which returns None when they match numpy and a one-line reason otherwise;
    ``scratch`` buffers are neither initialized nor read back. ``bound`` says which measured
    limit the kernel is compared with: ``"memory"`` (numpy copy bandwidth), ``"sgemm"`` (BLAS)
    or ``""`` (none).
    """

    name: str
    what: str
    launches: list[Launch]
    check: Check
    bytes_moved: float
    flops: float
    bound: str
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, tuple[tuple[int, ...], np.dtype]] = field(default_factory=dict)
    scratch: dict[str, tuple[tuple[int, ...], np.dtype]] = field(default_factory=dict)


def _i(value: int) -> np.int32:
    return np.int32(value)


def _f(value: float) -> np.float32:
    return np.float32(value)


def _round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    """None when ``got`` matches ``want`` elementwise, else where and by how much it differs."""
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return None
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    first = np.unravel_index(int(np.argmax(bad)), got.shape)
    return (f"{name}: {int(bad.sum())} of {got.size} elements differ, first at {first}: "
            f"{got[first]!r} != {want[first]!r}")


def _saxpy(size: str, rng: np.random.Generator) -> Case:
    n = 1 << 14 if size == "small" else 1 << 24
    a = 2.5
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        return compare("out", out["out"], np.float32(a) * x + y, 1e-6, 1e-6)

    return Case(
        "saxpy", f"n={n}",
        [Launch("saxpy", (n,), (256,), (_f(a), "x", "y", "out", _i(n)))],
        check, bytes_moved=12.0 * n, flops=2.0 * n, bound="memory",
        inputs={"x": x, "y": y}, outputs={"out": ((n,), np.dtype(np.float32))})


def _sgemm(size: str, rng: np.random.Generator, kernel: str) -> Case:
    n = 64 if size == "small" else 1024
    assert n % TILE == 0, "sgemm_tiled needs sizes that are multiples of TILE"
    a = rng.random((n, n), dtype=np.float32) - 0.5
    b = rng.random((n, n), dtype=np.float32) - 0.5

    def check(out: dict[str, np.ndarray]) -> str | None:
        want = a.astype(np.float64) @ b.astype(np.float64)
        return compare("C", out["C"], want, 1e-4, 1e-4 * math.sqrt(n))

    return Case(
        kernel, f"{n}x{n}x{n}",
        [Launch(kernel, (n, n), (TILE, TILE), (_i(n), _i(n), _i(n), "A", "B", "C"))],
        check, bytes_moved=12.0 * n * n, flops=2.0 * n ** 3, bound="sgemm",
        inputs={"A": a, "B": b}, outputs={"C": ((n, n), np.dtype(np.float32))})


def _reduction(size: str, rng: np.random.Generator) -> Case:
    n = 1 << 14 if size == "small" else 1 << 24
    groups = (n + REDUCE_LOCAL - 1) // REDUCE_LOCAL
    x = rng.random(n, dtype=np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        total = float(out["partial"].astype(np.float64).sum())
        want = float(x.astype(np.float64).sum())
        if abs(total - want) <= 1e-5 * abs(want):
            return None
        return f"sum {total!r} != {want!r}"

    return Case(
        "reduction", f"n={n}, local {REDUCE_LOCAL}",
        [Launch("reduce_sum", (groups * REDUCE_LOCAL,), (REDUCE_LOCAL,), ("x", "partial", _i(n)))],
        check, bytes_moved=4.0 * n, flops=float(n), bound="memory",
        inputs={"x": x}, outputs={"partial": ((groups,), np.dtype(np.float32))})


def _scan(size: str, rng: np.random.Generator) -> Case:
    n = 1 << 15 if size == "small" else 1 << 24
    data = rng.integers(0, 4, n, dtype=np.int32)
    scratch: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    int32 = np.dtype(np.int32)
    # Level 0 scans the data in blocks; level k + 1 scans the block sums of level k, until one
    # block holds a whole level. Then every level but the last adds the scanned sums above it.
    levels: list[tuple[str, str, int]] = []  # (input, output, length)
    source, length, level = "in", n, 0
    while True:
        target = "out" if level == 0 else f"scanned{level}"
        levels.append((source, target, length))
        if level > 0:
            scratch[target] = ((length,), int32)
        blocks = (length + SCAN_BLOCK - 1) // SCAN_BLOCK
        scratch[f"sums{level}"] = ((blocks,), int32)
        if blocks == 1:
            break
        source, length, level = f"sums{level}", blocks, level + 1
    launches = []
    for index, (source, target, length) in enumerate(levels):
        items = _round_up((length + SCAN_PER_ITEM - 1) // SCAN_PER_ITEM, SCAN_LOCAL)
        launches.append(Launch("scan_block", (items,), (SCAN_LOCAL,),
                               (source, target, f"sums{index}", _i(length))))
    for index in range(len(levels) - 2, -1, -1):
        _, target, length = levels[index]
        items = _round_up((length + SCAN_PER_ITEM - 1) // SCAN_PER_ITEM, SCAN_LOCAL)
        launches.append(Launch("scan_add", (items,), (SCAN_LOCAL,),
                               (target, levels[index + 1][1], _i(length))))

    def check(out: dict[str, np.ndarray]) -> str | None:
        return compare("out", out["out"], np.cumsum(data, dtype=np.int32), 0, 0)

    return Case(
        "scan", f"n={n} int, {len(launches)} launches", launches, check,
        bytes_moved=8.0 * n, flops=float(n), bound="memory",
        inputs={"in": data}, outputs={"out": ((n,), int32)}, scratch=scratch)


def _transpose(size: str, rng: np.random.Generator) -> Case:
    rows, cols = (256, 192) if size == "small" else (4096, 4096)
    a = rng.random((rows, cols), dtype=np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        return compare("out", out["out"], np.ascontiguousarray(a.T), 0, 0)

    return Case(
        "transpose", f"{rows}x{cols}",
        [Launch("transpose", (cols, rows), (TILE, TILE), ("in", "out", _i(rows), _i(cols)))],
        check, bytes_moved=8.0 * rows * cols, flops=0.0, bound="memory",
        inputs={"in": a}, outputs={"out": ((cols, rows), np.dtype(np.float32))})


def conv2d_reference(image: np.ndarray, filt: np.ndarray) -> np.ndarray:
    """5x5 convolution (correlation) with clamped borders, in float64."""
    height, width = image.shape
    padded = np.pad(image.astype(np.float64), 2, mode="edge")
    acc = np.zeros((height, width))
    for dy in range(5):
        for dx in range(5):
            acc += float(filt[dy, dx]) * padded[dy:dy + height, dx:dx + width]
    return acc


def _conv2d(size: str, rng: np.random.Generator) -> Case:
    side = 128 if size == "small" else 2048
    image = rng.random((side, side), dtype=np.float32)
    filt = (rng.random((5, 5), dtype=np.float32) / 25.0).astype(np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        return compare("out", out["out"], conv2d_reference(image, filt), 1e-5, 1e-5)

    return Case(
        "conv2d", f"{side}x{side}, 5x5",
        [Launch("conv2d_5x5", (side, side), (16, 16),
                ("in", "filter", "out", _i(side), _i(side)))],
        check, bytes_moved=8.0 * side * side, flops=50.0 * side * side, bound="memory",
        inputs={"in": image, "filter": filt.ravel()},
        outputs={"out": ((side, side), np.dtype(np.float32))})


def _stencil(size: str, rng: np.random.Generator) -> Case:
    nx, ny, nz = (64, 32, 16) if size == "small" else (256, 256, 256)
    grid = rng.random((nz, ny, nx), dtype=np.float32)
    c0, c1 = 0.4, 0.1

    def check(out: dict[str, np.ndarray]) -> str | None:
        g = grid.astype(np.float64)
        want = g.copy()
        inner = (slice(1, -1),) * 3
        want[inner] = c0 * g[inner] + c1 * (
            g[1:-1, 1:-1, :-2] + g[1:-1, 1:-1, 2:] + g[1:-1, :-2, 1:-1] + g[1:-1, 2:, 1:-1]
            + g[:-2, 1:-1, 1:-1] + g[2:, 1:-1, 1:-1])
        return compare("out", out["out"], want, 1e-5, 1e-6)

    return Case(
        "stencil7", f"{nx}x{ny}x{nz}",
        [Launch("stencil7", (nx, ny, nz), (64, 4, 1),
                ("in", "out", _i(nx), _i(ny), _i(nz), _f(c0), _f(c1)))],
        check, bytes_moved=8.0 * nx * ny * nz, flops=8.0 * nx * ny * nz, bound="memory",
        inputs={"in": grid}, outputs={"out": ((nz, ny, nx), np.dtype(np.float32))})


def _nbody(size: str, rng: np.random.Generator) -> Case:
    n = 512 if size == "small" else 6144
    dt, eps2 = 0.01, 0.01
    pos = rng.random((n, 4), dtype=np.float32)
    pos[:, 3] = rng.random(n, dtype=np.float32) / n + 0.5 / n  # masses
    vel = (rng.random((n, 4), dtype=np.float32) - 0.5) * 0.1
    vel[:, 3] = 0.0

    def check(out: dict[str, np.ndarray]) -> str | None:
        p = pos.astype(np.float64)
        acc = np.zeros((n, 3))
        for start in range(0, n, 512):  # blocks of rows keep the pairwise arrays small
            rows = p[start:start + 512]
            d = p[None, :, :3] - rows[:, None, :3]
            inv_r = 1.0 / np.sqrt((d * d).sum(axis=2) + eps2)
            acc[start:start + 512] = ((p[None, :, 3] * inv_r ** 3)[:, :, None] * d).sum(axis=1)
        want_vel = vel.astype(np.float64)
        want_vel[:, :3] += dt * acc
        want_pos = p.copy()
        want_pos[:, :3] += dt * want_vel[:, :3]
        scale = float(np.abs(want_vel).max())
        return (compare("new_vel", out["new_vel"], want_vel, 1e-4, 1e-4 * scale)
                or compare("new_pos", out["new_pos"], want_pos, 1e-5, 1e-6))

    return Case(
        "nbody", f"n={n}, one step",
        [Launch("nbody_step", (n,), (128,),
                ("pos", "vel", "new_pos", "new_vel", _i(n), _f(dt), _f(eps2)))],
        check, bytes_moved=64.0 * n, flops=20.0 * n * n, bound="",
        inputs={"pos": pos, "vel": vel},
        outputs={"new_pos": ((n, 4), np.dtype(np.float32)),
                 "new_vel": ((n, 4), np.dtype(np.float32))})


def _cnd(d: np.ndarray) -> np.ndarray:
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937
                                                      + k * (-1.821255978 + k * 1.330274429))))
    c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1.0 - c, c)


def _black_scholes(size: str, rng: np.random.Generator) -> Case:
    n = 1 << 14 if size == "small" else 1 << 22
    rate, volatility = 0.02, 0.30
    spot = (5.0 + 25.0 * rng.random(n)).astype(np.float32)
    strike = (1.0 + 99.0 * rng.random(n)).astype(np.float32)
    years = (0.25 + 9.75 * rng.random(n)).astype(np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        s, x, t = (a.astype(np.float64) for a in (spot, strike, years))
        sqrt_t = np.sqrt(t)
        d1 = (np.log(s / x) + (rate + 0.5 * volatility ** 2) * t) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        discounted = x * np.exp(-rate * t)
        call = s * _cnd(d1) - discounted * _cnd(d2)
        put = discounted * (1.0 - _cnd(d2)) - s * (1.0 - _cnd(d1))
        return (compare("call", out["call"], call, 1e-3, 2e-3)
                or compare("put", out["put"], put, 1e-3, 2e-3))

    return Case(
        "black_scholes", f"n={n} options",
        [Launch("black_scholes", (n,), (256,),
                ("spot", "strike", "years", "call", "put", _f(rate), _f(volatility), _i(n)))],
        check, bytes_moved=20.0 * n, flops=60.0 * n, bound="",
        inputs={"spot": spot, "strike": strike, "years": years},
        outputs={"call": ((n,), np.dtype(np.float32)), "put": ((n,), np.dtype(np.float32))})


def _histogram(size: str, rng: np.random.Generator) -> Case:
    n = 1 << 16 if size == "small" else 1 << 25
    data = rng.integers(0, HIST_BINS, n, dtype=np.uint8)
    items = HIST_LOCAL * (16 if size == "small" else 256)

    def check(out: dict[str, np.ndarray]) -> str | None:
        want = np.bincount(data, minlength=HIST_BINS).astype(np.uint32)
        return compare("bins", out["bins"], want, 0, 0)

    return Case(
        "histogram", f"n={n} bytes, {HIST_BINS} bins",
        [Launch("zero_uint", (HIST_BINS,), (HIST_BINS,), ("bins", _i(HIST_BINS))),
         Launch("histogram256", (items,), (HIST_LOCAL,), ("data", "bins", _i(n)))],
        check, bytes_moved=float(n), flops=0.0, bound="memory",
        inputs={"data": data}, outputs={"bins": ((HIST_BINS,), np.dtype(np.uint32))})


def _spmv(size: str, rng: np.random.Generator) -> Case:
    rows = 2048 if size == "small" else 1 << 20
    cols = rows
    lengths = rng.integers(4, 29, rows)  # 16 nonzeros per row on average
    row_start = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=row_start[1:])
    nnz = int(row_start[-1])
    # Columns near the diagonal with some scatter, as in matrices from meshes.
    centre = np.repeat(np.arange(rows), lengths)
    columns = np.clip(centre + rng.integers(-512, 513, nnz), 0, cols - 1).astype(np.int32)
    values = rng.random(nnz, dtype=np.float32) - 0.5
    x = rng.random(cols, dtype=np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        products = values.astype(np.float64) * x.astype(np.float64)[columns]
        want = np.add.reduceat(products, row_start[:-1].astype(np.int64))
        return compare("y", out["y"], want, 1e-4, 1e-5)

    return Case(
        "spmv_csr", f"{rows} rows, {nnz} nonzeros",
        [Launch("spmv_csr", (_round_up(rows, 128),), (128,),
                (_i(rows), "row_start", "columns", "values", "x", "y"))],
        check, bytes_moved=8.0 * nnz + 4.0 * (rows + 1) + 4.0 * cols + 4.0 * rows,
        flops=2.0 * nnz, bound="memory",
        inputs={"row_start": row_start, "columns": columns, "values": values, "x": x},
        outputs={"y": ((rows,), np.dtype(np.float32))})


def _gemv(size: str, rng: np.random.Generator) -> Case:
    rows, cols = (512, 256) if size == "small" else (8192, 4096)
    a = rng.random((rows, cols), dtype=np.float32) - 0.5
    x = rng.random(cols, dtype=np.float32)

    def check(out: dict[str, np.ndarray]) -> str | None:
        want = a.astype(np.float64) @ x.astype(np.float64)
        return compare("y", out["y"], want, 1e-4, 1e-4 * math.sqrt(cols))

    return Case(
        "gemv", f"{rows}x{cols}",
        [Launch("gemv", (rows,), (64,), (_i(rows), _i(cols), "A", "x", "y"))],
        check, bytes_moved=4.0 * (rows * cols + rows + cols), flops=2.0 * rows * cols,
        bound="memory",
        inputs={"A": a, "x": x}, outputs={"y": ((rows,), np.dtype(np.float32))})


CASES: dict[str, Callable[[str, np.random.Generator], Case]] = {
    "saxpy": _saxpy,
    "sgemm_naive": lambda size, rng: _sgemm(size, rng, "sgemm_naive"),
    "sgemm_tiled": lambda size, rng: _sgemm(size, rng, "sgemm_tiled"),
    "reduction": _reduction,
    "scan": _scan,
    "transpose": _transpose,
    "conv2d": _conv2d,
    "stencil7": _stencil,
    "nbody": _nbody,
    "black_scholes": _black_scholes,
    "histogram": _histogram,
    "spmv_csr": _spmv,
    "gemv": _gemv,
}


def make_case(name: str, size: str, rng: np.random.Generator) -> Case:
    """The benchmark ``name`` (a key of ``CASES``) at ``size`` ``"small"`` or ``"default"``."""
    return CASES[name](size, rng)
