"""The kernels of the benchmark suite (``ppcl bench``), with their inputs and numpy references.

Every kernel sits in one OpenCL C 1.2 program, ``SOURCE`` (``bench_source.py``), so that the suite also measures the
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

from ppcl.bench_source import (
    HIST_BINS,
    HIST_LOCAL,
    REDUCE_LOCAL,
    SCAN_BLOCK,
    SCAN_LOCAL,
    SCAN_PER_ITEM,
    TILE,
)

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
