"""Barrier-tiled kernels written as the vendors' samples write them, against numpy: the
local-tile matrix product (static __local tiles, and __local tiles passed as arguments),
at square and oblong local sizes, and a convolution through a local halo with rows along y
and z. Their accumulators live in context arrays across the barriers, and the inner loops
are interchanged with the work-item loops."""

from __future__ import annotations

import numpy as np
import pytest
from launch import LocalMem, run

# the local-tile matrix product of the vendors' samples, tile edge TW x TH
TILE_MM = """
__kernel void tile_mm(__global const float *a, __global const float *b, __global float *c, int n)
{
    __local float sa[TH][TW];
    __local float sb[TW][TW];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_group_id(0) * TW + tx;
    int row = get_group_id(1) * TH + ty;
    float sum = 0.0f;
    for (int t = 0; t < n / TW; ++t) {
        sa[ty][tx] = a[row * n + t * TW + tx];
        for (int r = ty; r < TW; r += TH)
            sb[r][tx] = b[(t * TW + r) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TW; ++k)
            sum += sa[ty][k] * sb[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = sum;
}
"""

# a 3x3 convolution through a local tile with a halo, one output per work-item; the z id
# picks one of two weight sets, so the rows run along y and z
CONV = """
#define T 8
__kernel void conv(__global const float *in, __global const float *w, __global float *out, int n)
{
    __local float halo[2][T + 2][T + 2];
    int lx = get_local_id(0), ly = get_local_id(1), lz = get_local_id(2);
    int gx = get_global_id(0), gy = get_global_id(1);
    for (int yy = ly; yy < T + 2; yy += T)
        for (int xx = lx; xx < T + 2; xx += T) {
            int sx = clamp((int)get_group_id(0) * T + xx - 1, 0, n - 1);
            int sy = clamp((int)get_group_id(1) * T + yy - 1, 0, n - 1);
            halo[lz][yy][xx] = in[sy * n + sx];
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            s += halo[lz][ly + i][lx + j] * w[lz * 9 + i * 3 + j];
    out[(lz * n + gy) * n + gx] = s;
}
"""


def _tile_mm(tw: int, th: int) -> str:
    return f"#define TW {tw}\n#define TH {th}\n" + TILE_MM


@pytest.mark.parametrize(("tw", "th"), [(16, 16), (8, 4), (4, 2)])
def test_the_tile_product_matches_numpy(tw: int, th: int) -> None:
    n = 32
    rng = np.random.default_rng(tw * 10 + th)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    src = _tile_mm(tw, th)
    run(src, "tile_mm", (n, n * th // tw), (tw, th), a, b, c, np.int32(n))
    rows = n * th // tw
    np.testing.assert_allclose(c[:rows], (a @ b)[:rows], rtol=1e-4, atol=1e-4)


def test_a_convolution_over_a_halo_with_rows_along_y_and_z_matches_numpy() -> None:
    n = 24
    rng = np.random.default_rng(3)
    img = rng.standard_normal((n, n)).astype(np.float32)
    w = rng.standard_normal(18).astype(np.float32)
    out = np.zeros((2, n, n), np.float32)
    run(CONV, "conv", (n, n, 2), (8, 8, 2), img, w, out, np.int32(n))
    p = np.pad(img, 1, mode="edge")
    for z in range(2):
        want = sum(p[i:i + n, j:j + n] * w[z * 9 + i * 3 + j] for i in range(3) for j in range(3))
        np.testing.assert_allclose(out[z], want, rtol=1e-5, atol=1e-5)


# the same product with its tiles passed as __local arguments and indexed through macros
NV_MM = """
#define BS 8
#define AS(i, j) As[(j) + (i) * BS]
#define BSUB(i, j) Bs[(j) + (i) * BS]
__kernel void nv_mm(__global float *C, __global const float *A, __global const float *B,
                    __local float *As, __local float *Bs, int wa, int wb)
{
    int tx = get_local_id(0), ty = get_local_id(1);
    int a_first = wa * BS * get_group_id(1), a_last = a_first + wa - 1;
    float csub = 0.0f;
    for (int a = a_first, b = BS * get_group_id(0); a <= a_last; a += BS, b += BS * wb) {
        AS(ty, tx) = A[a + wa * ty + tx];
        BSUB(ty, tx) = B[b + wb * ty + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < BS; ++k)
            csub += AS(ty, k) * BSUB(k, tx);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[get_global_id(1) * get_global_size(0) + get_global_id(0)] = csub;
}
"""


def test_the_product_with_local_tiles_as_arguments_matches_numpy() -> None:
    m, n = 16, 24  # C is m x n; A is m x n, B is n x n
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    run(NV_MM, "nv_mm", (n, m), (8, 8), c, a, b, LocalMem(256), LocalMem(256),
        np.int32(n), np.int32(n))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
