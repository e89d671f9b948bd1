"""The kernels of the work-group formation, jam, rows and grid-stride tests, run on the CPU
device (every transform of its pipeline) and on the checking device (the IR interpreted) at
awkward launch shapes with random inputs: every buffer must agree (``oracle.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kernel_sources import REDUCE
from oracle import (
    LocalMem,
    Shape,
    awkward_shapes,
    compare_buffers,
    compare_devices,
    random_array,
)
from test_gridstride import FILL, GRID_REDUCE, HISTOGRAM, SUMS
from test_jam import NORMS
from test_rows import IDS, STENCIL
from test_workgroup import (
    ALL_PAIRS,
    CSR,
    GUARDED_MATMUL,
    NAIVE_MATMUL,
    NBODY4,
    NESTED_VECTOR_ASSIGN,
    RECOMPUTE,
    SAXPY,
)

from ppcl.bench_source import SOURCE as BENCH

Rng = np.random.Generator


def _items(shape: Shape) -> int:
    total = 1
    for size in shape.global_size:
        total *= size
    offset = shape.offset or (0,) * len(shape.global_size)
    return total + sum(offset) * 64


def _saxpy(shape: Shape, rng: Rng) -> list[Any]:
    n = _items(shape)
    return [random_array(np.float32, n, rng), random_array(np.float32, n, rng),
            np.float32(1.5)]


def _gemv(shape: Shape, rng: Rng) -> list[Any]:
    rows = shape.global_size[0] - 1 if shape.global_size[0] > 1 else 1
    cols = 9
    return [np.int32(rows), np.int32(cols), random_array(np.float32, rows * cols, rng),
            random_array(np.float32, cols, rng), np.zeros(_items(shape), np.float32)]


def _norms(shape: Shape, rng: Rng) -> list[Any]:
    n = max(1, shape.global_size[0] - 2)
    length = 10
    return [random_array(np.float64, n * length, rng), np.zeros(_items(shape), np.float64),
            np.int32(n), np.int32(length)]


def _pairs(shape: Shape, rng: Rng) -> list[Any]:
    n = max(1, shape.global_size[0] - 1)
    return [random_array(np.float32, n, rng), np.zeros(_items(shape), np.float32),
            np.int32(n)]


def _csr(shape: Shape, rng: Rng) -> list[Any]:
    rows = shape.global_size[0]
    counts = rng.integers(0, 5, rows)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = max(1, int(start[-1]))
    cols = rng.integers(0, 16, nnz).astype(np.int32)
    return [np.int32(rows), start, cols, random_array(np.float32, nnz, rng),
            random_array(np.float32, 16, rng), np.zeros(_items(shape), np.float32)]


def _accel(shape: Shape, rng: Rng) -> list[Any]:
    n = max(1, shape.global_size[0] - 1)
    pos = random_array(np.float32, 4 * _items(shape), rng)
    return [pos, np.zeros(4 * _items(shape), np.float32), np.int32(n)]


def _nested(shape: Shape, rng: Rng) -> list[Any]:
    n = _items(shape)
    return [random_array(np.float32, 4 * n, rng), np.zeros(n, np.float32),
            np.int32(min(n, 9))]


def _recompute(shape: Shape, rng: Rng) -> list[Any]:
    return [random_array(np.float32, max(64, _items(shape)), rng) * 10,
            np.zeros(_items(shape), np.float32), np.int32(3)]


def _reduce(shape: Shape, rng: Rng) -> list[Any]:
    n = _items(shape)
    local = shape.local_size[0]
    return [random_array(np.float32, n, rng), np.zeros(n, np.float32), LocalMem(4 * local)]


def _histogram(shape: Shape, rng: Rng) -> list[Any]:
    n = 3 * shape.global_size[0] + 5
    return [rng.integers(0, 256, n).astype(np.uint8), np.zeros(64, np.uint32), np.int32(n)]


def _fill(shape: Shape, rng: Rng) -> list[Any]:
    return [np.full(200, -1, np.int32), np.int32(7), np.int32(190)]


def _sums(shape: Shape, rng: Rng) -> list[Any]:
    return [random_array(np.float32, 50, rng), np.zeros(_items(shape), np.float32),
            np.int32(50)]


def _grid_reduce(shape: Shape, rng: Rng) -> list[Any]:
    local = shape.local_size[0]
    groups = shape.global_size[0] // local
    return [random_array(np.float32, 300, rng), np.zeros(groups, np.float32),
            LocalMem(4 * local), np.int32(300)]


def _naive_mm(shape: Shape, rng: Rng) -> list[Any]:
    n = shape.global_size[0]
    rows = shape.global_size[1]
    size = max(n, rows)
    return [random_array(np.float32, size * size, rng), random_array(np.float32, size * size,
                                                                     rng),
            np.zeros(size * size, np.float32), np.int32(n)]


def _guarded_mm(shape: Shape, rng: Rng) -> list[Any]:
    m, n, k = max(1, shape.global_size[1] - 1), max(1, shape.global_size[0] - 2), 5
    return [np.int32(m), np.int32(n), np.int32(k), random_array(np.float32, m * k, rng),
            random_array(np.float32, k * n, rng), np.zeros(m * n, np.float32)]


def _ids(shape: Shape, rng: Rng) -> list[Any]:
    w, h = max(1, shape.global_size[0] - 1), max(1, shape.global_size[1] - 1)
    ox, oy = (shape.offset or (0, 0))[:2]
    return [np.full((h + oy) * (w + ox), -1, np.int32), np.int32(w + ox), np.int32(h + oy)]


def _stencil(shape: Shape, rng: Rng) -> list[Any]:
    nx, ny, nz = (max(1, s - 1) for s in shape.global_size)
    n = nx * ny * nz
    return [random_array(np.float32, n, rng), np.zeros(n, np.float32), np.int32(nx),
            np.int32(ny), np.int32(nz)]


ONE_D = awkward_shapes(1)
WITH_LOCAL = [s for s in ONE_D if s.offset is None]
POWER_OF_TWO_LOCAL = [s for s in WITH_LOCAL if (s.local_size[0] & (s.local_size[0] - 1)) == 0]

CASES = [
    ("saxpy (work-group formation)", SAXPY, "saxpy", _saxpy, ONE_D),
    ("gemv (jam)", BENCH, "gemv", _gemv, ONE_D),
    ("norms (jam, double)", NORMS, "norms", _norms, ONE_D),
    ("all pairs (interchange)", ALL_PAIRS, "pairs", _pairs, ONE_D),
    ("csr (varying trip count)", CSR, "spmv", _csr, ONE_D),
    ("float4 n-body (scalarize)", NBODY4, "accel", _accel, ONE_D),
    ("vector assignment in an expression", NESTED_VECTOR_ASSIGN, "k", _nested, ONE_D),
    ("recomputed ids across a barrier", RECOMPUTE, "k", _recompute,
     [Shape((64,), (64,)), Shape((192,), (64,))]),
    ("tree reduction (barriers)", REDUCE, "reduce", _reduce, POWER_OF_TWO_LOCAL),
    ("histogram (grid stride)", HISTOGRAM, "hist", _histogram, ONE_D),
    ("fill (grid stride, inclusive bound)", FILL, "fill", _fill, ONE_D),
    ("private sums (grid stride)", SUMS, "sums", _sums, ONE_D),
    ("grid-stride reduction (barrier)", GRID_REDUCE, "red", _grid_reduce, WITH_LOCAL),
    ("naive matmul (interchange, 2-D)", NAIVE_MATMUL, "mm", _naive_mm,
     [s for s in awkward_shapes(2) if s.offset is None]),
    ("guarded matmul (2-D)", GUARDED_MATMUL, "mm", _guarded_mm,
     [s for s in awkward_shapes(2) if s.offset is None]),
    ("ids (rows, 2-D)", IDS, "ids", _ids, awkward_shapes(2)),
    ("stencil (rows, 3-D)", STENCIL, "st", _stencil, awkward_shapes(3)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cpu_device_agrees_with_the_checking_device(case: tuple[Any, ...]) -> None:
    _label, source, name, make_args, shapes = case
    assert compare_devices(source, name, make_args, shapes, seed=7) == len(shapes)


def test_the_oracle_names_the_first_difference() -> None:
    want = np.arange(8, dtype=np.float32)
    have = want.copy()
    have[5] += 1.0
    with pytest.raises(AssertionError, match=r"argument 2 differs at \(5,\).*1 elements differ"):
        compare_buffers("k", Shape((8,), (4,)), 2, want, have, 1e-6, 1e-6)
    compare_buffers("k", Shape((8,), (4,)), 2, want, want + 1e-7, 1e-6, 1e-6)
