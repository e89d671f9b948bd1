"""Rows of work-groups along dimension 0 run as one work-item loop (``runs_rows``)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from launch import aligned_empty, build_kernel, run, run_in_chunks

from ppcl.compiler.frontend import compile_source, parse_build_options
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.settings import Debug

IDS = """
__kernel void ids(__global int *out, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    out[y * w + x] = (int)get_local_id(0) * 1000000 + (int)get_group_id(0) * 10000
                   + (int)get_local_id(1) * 100 + (int)get_group_id(1) + (int)get_local_size(0);
}
"""


@pytest.mark.parametrize("chunk", [1, 3, 5, 1000])
def test_row_of_groups_gives_every_work_item_its_ids(chunk):
    k = build_kernel(IDS, "ids", local_size=(4, 2))
    assert "__nrow" in k.c_source
    w, h = 18, 7  # ragged in both dimensions: 5 x 4 groups
    out = aligned_empty((h, w), np.int32)
    out[...] = -1
    run_in_chunks(k, (20, 8), [out, np.int32(w), np.int32(h)], chunk)
    y, x = np.mgrid[0:h, 0:w]
    want = (x % 4) * 1000000 + (x // 4) * 10000 + (y % 2) * 100 + y // 2 + 4
    np.testing.assert_array_equal(out, want)


def test_row_of_groups_with_a_global_offset():
    k = build_kernel(IDS, "ids", local_size=(4, 2))
    w, h = 12, 6
    out = aligned_empty((h, w), np.int32)
    out[...] = -1
    # ids start at (4, 2): the first 4 columns and 2 rows stay untouched
    run_in_chunks(k, (8, 4), [out, np.int32(w), np.int32(h)], 3, offset=(4, 2))
    y, x = np.mgrid[0:h, 0:w]
    gx, gy = x - 4, y - 2  # group ids count from the offset
    want = (gx % 4) * 1000000 + (gx // 4) * 10000 + (gy % 2) * 100 + gy // 2 + 4
    want[:2, :] = -1
    want[:, :4] = -1
    np.testing.assert_array_equal(out, want)


STENCIL = """
__kernel void st(__global const float *in, __global float *out, int nx, int ny, int nz) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    int idx = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx]
             + in[idx - nx * ny] + in[idx + nx * ny] - 6.0f * in[idx];
}
"""


def test_three_dimensional_stencil_in_rows_matches_numpy():
    k = build_kernel(STENCIL, "st", local_size=(8, 2, 2))
    assert "__nrow" in k.c_source
    nz, ny, nx = 6, 9, 21
    grid = np.random.default_rng(3).random((nz, ny, nx), dtype=np.float32)
    out = np.zeros_like(grid)
    run_in_chunks(k, (24, 10, 6), [grid, out, np.int32(nx), np.int32(ny),
                                              np.int32(nz)], 7)
    want = grid.copy()
    c = grid[1:-1, 1:-1, 1:-1]
    want[1:-1, 1:-1, 1:-1] = (grid[1:-1, 1:-1, :-2] + grid[1:-1, 1:-1, 2:] + grid[1:-1, :-2, 1:-1]
                              + grid[1:-1, 2:, 1:-1] + grid[:-2, 1:-1, 1:-1] + grid[2:, 1:-1, 1:-1]
                              - np.float32(6.0) * c)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("source", [
    # 1D: groups already run in memory order
    "__kernel void k(__global int *o) { o[get_global_id(0)] = 1; }",
    # per-group local memory
    """__kernel void k(__global int *o) {
        __local int t[4];
        t[get_local_id(0)] = (int)get_global_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        o[get_global_id(1) * 8 + get_global_id(0)] = t[3 - get_local_id(0)];
    }""",
    # a __local pointer argument is per-group scratch
    """__kernel void k(__global int *o, __local int *t) {
        t[get_local_id(0)] = 1;
        o[get_global_id(1) * 8 + get_global_id(0)] = t[get_local_id(0)];
    }""",
])
def test_kernels_that_need_their_groups_run_one_at_a_time(source):
    local_size = (4,) if "get_global_id(1)" not in source else (4, 2)
    k = build_kernel(source, "k", local_size=local_size)
    assert "__nrow" not in k.c_source


def test_rows_run_through_the_runtime():
    w, h = 16, 4
    out = np.full((h, w), -1, np.int32)
    run(IDS, "ids", (16, 4), (4, 2), out, np.int32(w), np.int32(h))
    y, x = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(out % 10000, (y % 2) * 100 + y // 2 + 4)
    np.testing.assert_array_equal(out // 10000, (x % 4) * 100 + x // 4)


# x walks down a column: lanes along x are a row (a run-time stride) apart, y along the row
COLUMN_UPDATE = """
__kernel void colupd(__global float *a, __global const float *f, __global const float *p,
                     int n) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= n || y >= n)
        return;
    a[n * x + y] -= f[x * n] * p[y];
}
"""

# the same walk with a stride fixed at build time: 32 floats, two cache lines
FIXED_COLUMN = """
__kernel void fixcol(__global float *a, __global const float *b) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    a[32 * x + y] = 2.0f * b[32 * x + y];
}
"""


def test_lanes_a_row_apart_along_x_run_group_by_group():
    k = build_kernel(COLUMN_UPDATE, "colupd", local_size=(4, 4))
    assert "__nrow" not in k.c_source
    n = 10  # ragged: 3 x 3 groups
    rng = np.random.default_rng(5)
    a = aligned_empty((n, n), np.float32)
    a[...] = rng.random((n, n), dtype=np.float32)
    f = aligned_empty((n, n), np.float32)
    f[...] = rng.random((n, n), dtype=np.float32)
    p = aligned_empty((n,), np.float32)
    p[...] = rng.random(n, dtype=np.float32)
    want = a - np.outer(f[:, 0], p)
    run_in_chunks(k, (12, 12), [a, f, p, np.int32(n)], 2)
    np.testing.assert_allclose(a, want, rtol=1e-6)


def test_lanes_a_cache_line_apart_along_x_run_group_by_group():
    k = build_kernel(FIXED_COLUMN, "fixcol", local_size=(8, 4))
    assert "__nrow" not in k.c_source
    b = aligned_empty((16, 32), np.float32)
    b[...] = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    a = aligned_empty((16, 32), np.float32)
    a[...] = 0
    run_in_chunks(k, (16, 32), [a, b], 3)
    np.testing.assert_array_equal(a, 2 * b)


def test_the_plans_say_which_access_keeps_the_groups_apart():
    stream = io.StringIO()
    kernel_ir(compile_source(COLUMN_UPDATE).module, "colupd", KernelSpec((4, 4, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    want = ("colupd: no rows of groups: the access at 8:6 moves along x by a run-time stride "
            "and along y within a cache line")
    assert want in stream.getvalue()


# lanes along x read a column (a row apart), but the same one for every y: rows still pay
SCALED_ROWS = """
__kernel void scale(__global float *a, __global const float *c, int n) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < n && y < n)
        a[y * n + x] *= c[x * n];
}
"""


def test_a_column_read_the_same_for_every_row_keeps_the_rows():
    k = build_kernel(SCALED_ROWS, "scale", local_size=(4, 4))
    assert "__nrow" in k.c_source
    n = 10
    rng = np.random.default_rng(6)
    a = aligned_empty((n, n), np.float32)
    a[...] = rng.random((n, n), dtype=np.float32)
    c = aligned_empty((n, n), np.float32)
    c[...] = rng.random((n, n), dtype=np.float32)
    want = a * c[:, 0][None, :]
    run_in_chunks(k, (12, 12), [a, c, np.int32(n)], 2)
    np.testing.assert_allclose(a, want, rtol=1e-6)
