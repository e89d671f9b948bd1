"""The layout of private arrays kept in context arrays: element-major (``[16][work-items]``)
where every index is the same for all work-items, so that consecutive work-items touch
consecutive elements and the work-item loop vectorizes; work-item-major otherwise."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from launch import LocalMem, build_kernel, run
from test_workgroup import formed

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.pipeline import KernelSpec, cpu_pipeline, kernel_ir
from ppcl.settings import Debug

# Parboil's register-tiled sgemm (A column-major, B transposed): each work-item keeps a row of
# 16 results of C in a private array across the barriers of the k loop (its inner loop kept a
# loop by the pragma: unrolled, ``c`` would be 16 scalars, and no array would need a layout)
SGEMM = """
#define TILE_N 16
#define TILE_TB_HEIGHT 8
#define TILE_M (TILE_N*TILE_TB_HEIGHT)
__kernel void mysgemmNT(__global const float *A, int lda, __global const float *B, int ldb,
                        __global float *C, int ldc, int k, float alpha, float beta) {
    float c[TILE_N];
    for (int i = 0; i < TILE_N; i++) c[i] = 0.0f;
    int mid = get_local_id(1) * get_local_size(0) + get_local_id(0);
    int m = get_group_id(0) * TILE_M + mid;
    int n = get_group_id(1) * TILE_N + get_local_id(0);
    __local float b_s[TILE_TB_HEIGHT][TILE_N];
    for (int i = 0; i < k; i += TILE_TB_HEIGHT) {
        float a;
        b_s[get_local_id(1)][get_local_id(0)] = B[n + (i + get_local_id(1)) * ldb];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < TILE_TB_HEIGHT; j++) {
            a = A[m + (i + j) * lda];
            #pragma unroll 1
            for (int kk = 0; kk < TILE_N; kk++) c[kk] += a * b_s[j][kk];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int t = ldc * get_group_id(1) * TILE_N + m;
    for (int i = 0; i < TILE_N; i++) C[t + i * ldc] = C[t + i * ldc] * beta + alpha * c[i];
}
"""


def _layouts(source: str, local_size: tuple[int, int, int]) -> dict[str, bool]:
    return {layout.name: layout.element_major for layout in formed(source, local_size).context_layouts}


def _sgemm(m: int, n: int, k: int, uniformity: bool = True) -> None:
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    lda, ldb, ldc = m + 3, n + 5, m + 1  # leading dimensions wider than the matrices
    a = rng.standard_normal((k, lda)).astype(np.float32)
    b = rng.standard_normal((k, ldb)).astype(np.float32)
    c = rng.standard_normal((n, ldc)).astype(np.float32)
    alpha, beta = np.float32(0.75), np.float32(-1.25)
    want = c.astype(np.float64).copy()
    want[:, :m] = beta * want[:, :m] + alpha * (b[:, :n].T.astype(np.float64) @ a[:, :m])
    run(SGEMM, "mysgemmNT", (m // 128 * 16, n // 16 * 8), (16, 8), a.ravel(), np.int32(lda),
        b.ravel(), np.int32(ldb), out := c.ravel().copy(), np.int32(ldc), np.int32(k), alpha,
        beta, uniformity=uniformity)
    np.testing.assert_allclose(out.reshape(n, ldc), want, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("m,n,k", [(128, 16, 8), (256, 48, 24), (384, 32, 72)])
def test_register_tiled_sgemm_matches_numpy(m, n, k):
    _sgemm(m, n, k)


def test_register_tiled_sgemm_matches_numpy_masked():
    _sgemm(256, 32, 16, uniformity=False)


def test_private_array_indexed_alike_by_all_work_items_is_element_major():
    assert _layouts(SGEMM, (16, 8, 1)) == {"c": True}


def test_element_major_private_array_lets_the_work_item_loops_vectorize():
    """With ``c`` laid out ``[16][work-items]`` the accumulation ``c[kk] += a * b_s[j][kk]``
    reads consecutive floats for consecutive work-items (work-item-major, gcc vectorized the
    work-item loop with element-wise strided loads and stores, 6x slower)."""
    k = build_kernel(SGEMM, "mysgemmNT", local_size=(16, 8), want_vector_report=True)
    assert "__ctx_c[16][128]" in k.c_source
    lines = k.c_source.splitlines()
    (hot,) = [n for n, line in enumerate(lines, 1) if "__ctx_c[ppcl_u_kk][__lid] +=" in line]
    pragma = max(n for n, line in enumerate(lines[:hot], 1) if "#pragma omp simd" in line)
    done = {int(m.group(1)) for m in re.finditer(r":(\d+):\d+: optimized: loop vectorized",
                                                  k.vector_report)}  # type: ignore[attr-defined]
    assert any(pragma < n < hot for n in done), k.vector_report  # type: ignore[attr-defined]


def test_layout_decision_is_shown_with_the_plans():
    module = compile_source(SGEMM).module
    out = io.StringIO()
    kernel_ir(module, "mysgemmNT", KernelSpec((16, 8, 1)), parse_build_options(""),
              Debug(frozenset({"plans"})), cpu_pipeline(True), out)
    lines = [line for line in out.getvalue().splitlines() if "context array c" in line]
    assert len(lines) == 1 and "element-major" in lines[0], out.getvalue()


# each work-item reads its array at an index of its own: work-item-major, and correct
VARYING = """
__kernel void rotate(__global const float *x, __global float *y) {
    int l = get_local_id(0);
    size_t g = get_global_id(0);
    float v[8];
    for (int i = 0; i < 8; i++) v[i] = x[g * 8 + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = v[l % 8];
    for (int i = 0; i < 8; i++) s += v[(i + l) & 7] * (i + 1);
    y[g] = s;
}
"""


def test_private_array_indexed_per_work_item_stays_work_item_major_and_correct():
    assert _layouts(VARYING, (12, 1, 1)) == {"v": False}
    x = np.random.default_rng(1).standard_normal(36 * 8).astype(np.float32)
    y = np.zeros(36, np.float32)
    run(VARYING, "rotate", (36,), (12,), x, y)
    v = x.reshape(36, 8)
    lane = np.arange(36) % 12
    want = v[np.arange(36), lane % 8] + sum(
        v[np.arange(36), (i + lane) & 7] * (i + 1) for i in range(8))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


# arrays of vectors and of structs, with a 2-D array with an initializer
AGGREGATES = """
typedef struct { float a; int b; } pair;
__kernel void aggregates(__global const float4 *x, __global float *y, __local float *tmp) {
    int l = get_local_id(0);
    size_t g = get_global_id(0);
    float4 v[3];
    pair p[2];
    float w[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
    for (int i = 0; i < 3; i++) v[i] = x[g * 3 + i];
    for (int i = 0; i < 2; i++) { p[i].a = v[i].y; p[i].b = i + l; }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) w[i][j] *= v[i][j];
    tmp[l] = v[0].x;
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = tmp[(l + 1) % get_local_size(0)];
    for (int i = 0; i < 3; i++) { v[i].xz += s; s += dot(v[i], v[i]); }
    for (int i = 0; i < 2; i++) s += p[i].a * p[i].b;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) s += w[i][j] * (i - j);
    y[g] = s;
}
"""


def _aggregates_reference(x: np.ndarray, local: int) -> np.ndarray:
    n = x.shape[0]
    lane = np.arange(n) % local
    base = np.arange(n) - lane
    s = x[base + (lane + 1) % local, 0, 0].astype(np.float64)
    v = x.astype(np.float64).copy()
    w = np.arange(1, 13, dtype=np.float64).reshape(3, 4) * x[:, :, :].astype(np.float64)
    for i in range(3):
        v[:, i, [0, 2]] += s[:, None]
        s = s + (v[:, i] ** 2).sum(axis=1)
    for i in range(2):
        s = s + x[:, i, 1] * (i + lane)
    for i in range(3):
        for j in range(4):
            s = s + w[:, i, j] * (i - j)
    return s


@pytest.mark.parametrize("uniformity", [True, False])
def test_arrays_of_vectors_structs_and_2d_arrays_match_numpy(uniformity):
    local, n = 6, 30
    x = np.random.default_rng(2).standard_normal((n, 3, 4)).astype(np.float32)
    y = np.zeros(n, np.float32)
    run(AGGREGATES, "aggregates", (n,), (local,), x.ravel(), y, LocalMem(local * 4),
        uniformity=uniformity)
    np.testing.assert_allclose(y, _aggregates_reference(x, local), rtol=1e-4, atol=1e-3)


def test_arrays_of_vectors_structs_and_2d_arrays_are_element_major():
    assert _layouts(AGGREGATES, (6, 1, 1)) == {"v": True, "p": True, "w": True}


# an array passed by pointer: to a helper that is inlined (``fill``) and to one that stays a
# call (on the lazy side of ``?:``), and its element's address taken
POINTERS = """
void fill(float *p, __global const float *x, int n) {
    for (int i = 0; i < n; i++) p[i] = x[i] * (i + 1);
}
float total(const float *p, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += p[i] * p[i];
    return s;
}
__kernel void pointers(__global const float *x, __global float *y, __local float *tmp) {
    int l = get_local_id(0);
    size_t g = get_global_id(0);
    float v[6], u[4];
    fill(v, x + g * 6, 6);
    for (int i = 0; i < 4; i++) u[i] = x[g * 6 + i] - 1.0f;
    float *q = &u[1];
    tmp[l] = v[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = tmp[(l + 2) % get_local_size(0)];
    s += l >= 0 ? total(v, 6) : 0.0f;
    y[g] = s + q[0] + q[2];
}
"""


def test_arrays_passed_by_pointer_stay_work_item_major_and_correct():
    layouts = _layouts(POINTERS, (8, 1, 1))
    assert layouts.get("v") is not True and layouts.get("u") is not True, layouts
    n, local = 40, 8
    x = np.random.default_rng(3).standard_normal((n, 6)).astype(np.float32)
    y = np.zeros(n, np.float32)
    run(POINTERS, "pointers", (n,), (local,), x.ravel(), y, LocalMem(local * 4))
    lane = np.arange(n) % local
    v = x.astype(np.float64) * np.arange(1, 7)
    want = v[np.arange(n) - lane + (lane + 2) % local, 0] + (v ** 2).sum(axis=1) \
        + (x[:, 1] - 1.0) + (x[:, 3] - 1.0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)


# no barrier: the private array stays a variable of the work-item loop, unless a loop that
# writes it is interchanged with the work-item loop (``window``: ``x[g + i]`` is consecutive)
NO_BARRIER = """
__kernel void window(__global const float *x, __global float *y, int stride) {
    size_t g = get_global_id(0);
    float v[5];
    for (int i = 0; i < 5; i++) v[i] = x[g * stride + i];
    float s = 0.0f;
    for (int i = 0; i < 5; i++) s += v[i] * v[4 - i];
    y[g] = s;
}
"""


def test_private_array_without_barrier_stays_private_unless_interchanged():
    strided = NO_BARRIER.replace("g * stride + i", "g * 5 + i")
    assert formed(strided, (16, 1, 1)).context_vars == {}
    # kept a loop (unrolled, ``v`` would be five scalars): interchanged, ``v`` is element-major
    consecutive = NO_BARRIER.replace("g * stride + i", "g + i").replace(
        "    for (int i = 0; i < 5; i++) v[i]", "    #pragma unroll 1\n    for (int i = 0; i < 5; i++) v[i]")
    assert _layouts(consecutive, (16, 1, 1)) == {"v": True}
    for stride in (1, 5):
        x = np.random.default_rng(4).standard_normal(48 * stride + 5).astype(np.float32)
        y = np.zeros(48, np.float32)
        run(NO_BARRIER, "window", (48,), (16,), x, y, np.int32(stride))
        windows = np.stack([x[g * stride:g * stride + 5] for g in range(48)]).astype(np.float64)
        np.testing.assert_allclose(y, (windows * windows[:, ::-1]).sum(axis=1), rtol=1e-5,
                                   atol=1e-5)


# a pointer kept across the barrier into a private array that the kernel names in one region
# only: the array must outlive that region
DANGLING = """
__kernel void rows(__global const float *x, __global float *y, __local float *tmp) {
    int l = get_local_id(0);
    size_t g = get_global_id(0);
    float w[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) w[i][j] = x[g * 12 + i * 4 + j];
    float *r = w[l % 3];
    tmp[l] = r[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    y[g] = r[1] + r[3] * tmp[(l + 1) % get_local_size(0)];
}
"""


def test_pointer_into_a_private_array_across_a_barrier_keeps_the_array_alive():
    assert "w" in formed(DANGLING, (5, 1, 1)).context_vars
    n, local = 20, 5
    x = np.random.default_rng(5).standard_normal((n, 3, 4)).astype(np.float32)
    y = np.zeros(n, np.float32)
    run(DANGLING, "rows", (n,), (local,), x.ravel(), y, LocalMem(local * 4))
    lane = np.arange(n) % local
    r = x[np.arange(n), lane % 3].astype(np.float64)
    after = np.arange(n) - lane + (lane + 1) % local
    np.testing.assert_allclose(y, r[:, 1] + r[:, 3] * r[after, 0], rtol=1e-5, atol=1e-5)


# a struct of one scalar type and a float4 crossing barriers: whole copies, field updates, a
# struct passed to and returned from a helper, one struct whose address is taken (kept AoS)
STRUCT_BARRIER = """
typedef struct { float x, y, w; } point;
typedef struct { float v; int n; } mixed;
point shifted(point p, float d) { point q = p; q.x += d; q.y -= d; return q; }
void bump(point *p) { p->w += 1.0f; }
__kernel void k(__global const float *in, __global float *out, __local float *tile) {
    int l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);
    point p = {in[g], 2.0f * in[g], 1.0f}, kept = p;
    mixed m = {in[g], l};
    float4 v = (float4)(in[g], 0.5f, 0.25f, 1.0f);
    tile[l] = p.x;
    barrier(CLK_LOCAL_MEM_FENCE);
    point q = shifted(p, tile[(l + 1) % n]);
    p = q;
    p.w *= tile[(l + 2) % n];
    point spare = kept;
    bump(l >= 0 ? &kept : &spare);  /* one of two addresses: kept stays address-taken */
    v.y += tile[n - 1 - l];
    m.v += v.y;
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[l] = p.y + v.x;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = p.x + p.y * 3.0f + p.w * 5.0f + tile[(l + 3) % n] + kept.w + m.v + m.n + v.y;
}
"""


def _struct_barrier_reference(x: np.ndarray, local: int) -> np.ndarray:
    n = x.size
    lane = np.arange(n) % local
    base = np.arange(n) - lane
    t = lambda k: x[base + (lane + k) % local]  # noqa: E731
    px = x + t(1)
    py = 2.0 * x - t(1)
    pw = t(2)
    vy = 0.5 + x[base + local - 1 - lane]
    mv = x + vy
    tile = py + x
    return px + py * 3.0 + pw * 5.0 + tile[base + (lane + 3) % local] + 2.0 + mv + lane + vy


@pytest.mark.parametrize("local", [16, 64])
def test_structs_and_vectors_across_barriers_field_major_match_numpy(local):
    x = np.random.default_rng(local).uniform(-1, 1, 4 * local).astype(np.float32)
    out = np.zeros_like(x)
    run(STRUCT_BARRIER, "k", (x.size,), (local,), x, out, LocalMem(local * 4))
    np.testing.assert_allclose(out, _struct_barrier_reference(x.astype(np.float64), local),
                               rtol=1e-5, atol=1e-4)
    layouts = {layout.name: layout for layout in formed(STRUCT_BARRIER,
                                                        (local, 1, 1)).context_layouts}
    assert layouts["p"].components, layouts  # a struct of floats: field-major
    assert "kept" not in layouts or not layouts["kept"].components  # its address is taken
    assert "m" not in layouts or not layouts["m"].components  # fields of two types


# accumulators in a private array of float4, indexed alike by all work-items, across a barrier
# loop whose inner loop reads only broadcasts (the shape of a register-tiled product)
VECTOR_ACCUMULATORS = """
__kernel void k(__global const float4 *x, __global float4 *out, __local float4 *tile, int steps) {
    int l = get_local_id(0), g = get_global_id(0), ls = get_local_size(0);
    float4 acc[2] = {(float4)(0.0f), (float4)(0.0f)};
    for (int t = 0; t < steps; t++) {
        tile[l] = x[t * get_global_size(0) + g];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < ls; j++) {
            acc[0] += tile[j] * x[g].x;
            acc[1] += tile[j].yzwx * x[g].y;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = acc[0] + acc[1];
}
"""


@pytest.mark.parametrize("local", [16, 32])
def test_an_element_major_array_indexed_alike_lets_the_broadcast_loop_interchange(local):
    """The inner loop was kept in the work-item loop for indexing a private array (21 ms
    against pocl's 16.7 for 64K work-items and 8 tiles of 64); indexed alike by all work-items
    the array is element-major, so the loop interchanges (2.4 ms)."""
    plans = io.StringIO()
    module = compile_source(VECTOR_ACCUMULATORS).module
    kernel_ir(module, "k", KernelSpec((local, 1, 1)), parse_build_options(""),
              Debug(frozenset({"plans"})), cpu_pipeline(True), plans)
    assert re.search(r"for loop at <source>:8:9: interchange", plans.getvalue()), plans.getvalue()
    n, steps = 4 * local, 3
    x = np.random.default_rng(local).random((n * steps, 4)).astype(np.float32)
    out = np.zeros((n, 4), np.float32)
    run(VECTOR_ACCUMULATORS, "k", (n,), (local,), x, out, LocalMem(local * 16), np.int32(steps))
    lane = np.arange(n) % local
    base = np.arange(n) - lane
    want = np.zeros((n, 4))
    for t in range(steps):
        tiles = x[t * n + base[:, None] + np.arange(local)[None, :]].astype(np.float64)
        sums = tiles.sum(axis=1)
        want += sums * x[:n, 0:1] + np.roll(sums, -1, axis=1) * x[:n, 1:2]
    np.testing.assert_allclose(out, want, rtol=1e-4)
