"""Work-group formation: the shape of the formed IR and of the generated C."""

from __future__ import annotations

import io

import numpy as np
import pytest
from kernel_sources import REDUCE
from launch import LocalMem, build_kernel, run

from ppcl.compiler.analysis.liveness import live_across_regions
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, cpu_pipeline, kernel_ir
from ppcl.settings import Debug

HYPOT = """
__kernel void magnitude(__global const float *x, __global const float *y, __global float *m) {
    size_t i = get_global_id(0);
    m[i] = hypot(x[i], y[i]);
}
"""


def test_work_item_loop_calling_hypot_is_vectorized():
    """Float hypot is inline C through double, not a libm call, so the work-item loop around
    it vectorizes (the gradient magnitude of a Sobel filter); C99's special cases hold."""
    k = build_kernel(HYPOT, "magnitude", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    assert "hypotf(" not in k.c_source
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(256) * 10.0 ** rng.integers(-40, 38, 256)).astype(np.float32)
    y = (rng.standard_normal(256) * 10.0 ** rng.integers(-40, 38, 256)).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, np.nan, 3e38, 0.0]
    y[:6] = [np.nan, 1.0, np.inf, 2.0, 3e38, -0.0]
    m = np.zeros_like(x)
    run(HYPOT, "magnitude", (256,), (64,), x, y, m)
    want = np.hypot(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(m[:6], [np.inf, np.inf, np.inf, np.nan, want[4], 0.0])
    finite = np.isfinite(want)
    ulps = np.abs(m[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32))
    assert ulps.max() <= 1


NAIVE_MATMUL = """
__kernel void mm(__global const float *A, __global const float *B, __global float *C, int n) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
"""

SAXPY = """
__kernel void saxpy(__global float *y, __global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""


def formed(source: str, local_size: tuple[int, int, int], uniform: bool = True):
    module = compile_source(source).module
    result = kernel_ir(module, module.kernels[0].name, KernelSpec(local_size),
                       parse_build_options(""), Debug(verify=True), cpu_pipeline(uniform))
    assert result.formed is not None
    return result.formed


def test_uniform_barrier_loop_runs_in_lock_step_without_masks():
    f = formed(REDUCE, (64, 1, 1))
    assert f.masks == ()
    assert "k" in f.group_scalars  # the uniform loop counter stays one scalar
    assert "lid" in f.recomputed  # live across regions, recomputed from the local id
    assert "lid" not in f.context_vars
    assert len(find_all(f.body, wg.WorkItemLoop)) == 3


def test_without_uniformity_everything_is_masked():
    f = formed(REDUCE, (64, 1, 1), uniform=False)
    assert any("m_loop" in m for m in f.masks)
    assert not f.group_scalars
    assert find_all(f.body, wg.MaskAny)


def test_liveness_keeps_region_local_values_out_of_context_arrays():
    f = formed(SAXPY, (16, 1, 1))
    assert f.context_vars == {}
    assert live_across_regions(f.body, ["i"]) == set()


def test_naive_matmul_k_loop_is_interchanged():
    f = formed(NAIVE_MATMUL, (16, 2, 1))
    assert f.interchanged == 1
    assert "acc" in f.context_vars and "k" in f.group_scalars
    k = build_kernel(NAIVE_MATMUL, "mm", local_size=(16, 2))
    source = k.c_source
    group = source[source.index("static void ppcl_group_mm"):]
    # the k loop is at group level, the work-item loops inside its body
    assert group.index("for (; ppcl_u_k < ppcl_u_n; ppcl_u_k++)") < group.index("__ctx_acc[__lid] +=")
    n = 32
    a = np.random.default_rng(0).random((n, n)).astype(np.float32)
    b = np.random.default_rng(1).random((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    run(NAIVE_MATMUL, "mm", (n, n), (16, 2), a, b, c, np.int32(n))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_elementwise_work_item_loop_is_vectorized():
    k = build_kernel(SAXPY, "saxpy", local_size=(64,), want_vector_report=True)
    assert "#pragma omp simd" in k.c_source
    report = k.vector_report  # type: ignore[attr-defined]
    assert "vectorized" in report or "VECTORIZED" in report.upper()


EXP_LOG = """
__kernel void explog(__global const float *x, __global float *y) {
    int i = get_global_id(0);
    float v = x[i];
    y[i] = exp(-v) + log(v) * exp2(v * 0.25f) - log10(v + 1.0f) + log2(v) * exp10(-v)
           + expm1(-v) * log1p(v);
}
"""


def test_work_item_loop_calling_exp_and_log_is_vectorized():
    """The float exponentials and logarithms are inline C, not libm calls, so the work-item
    loop around them still vectorizes (a call to expf or logf would keep it scalar)."""
    k = build_kernel(EXP_LOG, "explog", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    assert "expf(" not in k.c_source and "logf(" not in k.c_source
    x = np.random.default_rng(0).uniform(0.01, 20, 256).astype(np.float32)
    y = np.zeros_like(x)
    run(EXP_LOG, "explog", (256,), (64,), x, y)
    xd = x.astype(np.float64)
    ref = (np.exp(-xd) + np.log(xd) * np.exp2(xd * 0.25) - np.log10(xd + 1) + np.log2(xd)
           * 10.0 ** -xd + np.expm1(-xd) * np.log1p(xd))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


POW = """
__kernel void tone(__global const float *x, __global const float *g, __global float *y) {
    int i = get_global_id(0);
    y[i] = pow(x[i], g[i]) + pow(-x[i], 3.0f);
}
"""


def _work_item_loops_vectorized(k) -> bool:
    """Whether gcc's report says it vectorized every loop under ``#pragma omp simd`` (the
    work-item loops), not merely some loop of the unit: each loop's lines (the pragma to its
    closing brace) hold a "loop vectorized" line of the report."""
    import re

    lines = k.c_source.splitlines()
    done = {int(m.group(1)) for m in re.finditer(r":(\d+):\d+: optimized: loop vectorized",
                                                  k.vector_report)}  # type: ignore[attr-defined]
    spans = []
    for n, line in enumerate(lines):
        if "#pragma omp simd" not in line:
            continue
        depth, last = 0, n
        for m in range(n + 1, len(lines)):
            depth += lines[m].count("{") - lines[m].count("}")
            if depth <= 0 and "}" in lines[m]:
                last = m
                break
        spans.append((n + 1, last + 1))  # 1-based
    return bool(spans) and all(any(lo <= d <= hi for d in done) for lo, hi in spans)


def test_work_item_loop_calling_pow_is_vectorized():
    """Float pow is inline C too (2^(y log2|x|) in double, C99's cases by selects): a work-item
    loop calling it vectorizes, where glibc's powf kept it scalar; the selects are & and | of
    comparisons, since a && in the helper left the loop unvectorized."""
    k = build_kernel(POW, "tone", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    assert "powf(" not in k.c_source
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 4, 256).astype(np.float32)
    g = rng.uniform(-3, 3, 256).astype(np.float32)
    y = np.zeros_like(x)
    run(POW, "tone", (256,), (64,), x, g, y)
    ref = np.power(x.astype(np.float64), g) + np.power(-x.astype(np.float64), 3)
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)

def test_generated_c_is_deterministic_and_cached():
    first = build_kernel(SAXPY, "saxpy", local_size=(32,))
    second = build_kernel(SAXPY, "saxpy", local_size=(32,))
    assert first.c_source == second.c_source
    assert second.cached


RECOMPUTE = """
__kernel void k(__global const float *in, __global float *out, int stride) {
    __local float tile[64];
    int lid = get_local_id(0);
    int twice = lid * 2;
    int mirrored = 63 - twice / 2 + stride * 0;
    int loaded = (int)in[lid];
    int counter = lid;
    counter += 1;
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[mirrored] + loaded + counter;
}
"""


def test_pure_id_values_are_recomputed_and_the_rest_kept_per_work_item():
    f = formed(RECOMPUTE, (64, 1, 1))
    # mirrored is read after the barrier; it needs twice and lid, which are recomputed too
    assert {"lid", "twice", "mirrored"} <= set(f.recomputed)
    assert "loaded" in f.context_vars  # a load from memory is not recomputed
    assert "counter" in f.context_vars  # written after its declaration
    k = build_kernel(RECOMPUTE, "k", local_size=(64,))
    group = k.c_source[k.c_source.index("static void ppcl_group_k"):]
    assert group.count("int ppcl_u_mirrored =") == 2 and group.count("int ppcl_u_twice =") == 2
    data = np.arange(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    run(RECOMPUTE, "k", (128,), (64,), data, out, np.int32(3))
    lid = np.tile(np.arange(64), 2)
    group_base = np.repeat([0, 64], 64)
    np.testing.assert_array_equal(out, data[group_base + 63 - lid] + lid + lid + 1)


GUARDED_MATMUL = """
__kernel void mm(int M, int N, int K, __global const float *A, __global const float *B,
                 __global float *C) {
    int col = get_global_id(0), row = get_global_id(1);
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
"""


def test_loop_after_a_varying_return_is_interchanged_under_the_function_mask():
    f = formed(GUARDED_MATMUL, (16, 4, 1))
    assert f.interchanged >= 1
    # formed twice: unmasked when the whole group is active, masked at the edges
    alternatives = [s for s in find_all(f.body, ir.If) if isinstance(s.cond, wg.MaskAll)]
    assert len(alternatives) == 1
    assert "acc" in f.context_vars and "k" in f.group_scalars
    k = build_kernel(GUARDED_MATMUL, "mm", local_size=(16, 4))
    assert "ppcl_all(" in k.c_source
    rng = np.random.default_rng(2)
    m, n, depth = 37, 45, 19  # ragged: the last groups in both dimensions are partial
    a = rng.random((m, depth), dtype=np.float32)
    b = rng.random((depth, n), dtype=np.float32)
    c = np.full((64, 48), -1.0, np.float32)
    run(GUARDED_MATMUL, "mm", (48, 64), (16, 4), np.int32(m), np.int32(n), np.int32(depth), a, b, c)
    flat = c.ravel()  # C is m x n, row-major, at the start of the buffer
    np.testing.assert_allclose(flat[:m * n].reshape(m, n), a @ b, rtol=1e-5)
    assert (flat[m * n:] == -1.0).all()  # masked-off work-items stored nothing


ALL_PAIRS = """
__kernel void pairs(__global const float *x, __global float *out, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float xi = x[i];
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
        float d = x[j] - xi;
        acc += d * d;
    }
    out[i] = acc;
}
"""


def test_loop_reading_only_broadcast_data_is_interchanged():
    f = formed(ALL_PAIRS, (32, 1, 1))
    assert f.interchanged >= 1
    assert "d" not in f.context_vars  # declared and used within one region of each copy
    x = np.random.default_rng(3).random(50, dtype=np.float32)
    out = np.zeros(64, np.float32)
    run(ALL_PAIRS, "pairs", (64,), (32,), x, out, np.int32(50))
    want = ((x[None, :] - x[:, None]) ** 2).sum(axis=1)
    np.testing.assert_allclose(out[:50], want, rtol=1e-5)


STRIDED_ROWS = """
__kernel void gemv(int cols, __global const float *A, __global const float *x,
                   __global float *y) {
    int row = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k) acc += A[row * cols + k] * x[k];
    y[row] = acc;
}
"""


def test_loop_whose_accesses_stride_across_work_items_stays_inside_the_work_item_loop():
    assert formed(STRIDED_ROWS, (64, 1, 1)).interchanged == 0


CSR = """
__kernel void spmv(int rows, __global const int *start, __global const int *cols,
                   __global const float *vals, __global const float *x, __global float *y) {
    int row = get_global_id(0);
    if (row >= rows) return;
    float acc = 0.0f;
    for (int k = start[row]; k < start[row + 1]; ++k) acc += vals[k] * x[cols[k]];
    y[row] = acc;
}
"""


def test_float_sum_in_a_loop_of_varying_trip_count_is_compiled_scalar():
    k = build_kernel(CSR, "spmv", local_size=(32,))
    assert 'optimize("no-tree-loop-vectorize")' in k.c_source
    assert "no-tree-loop-vectorize" not in build_kernel(SAXPY, "saxpy", local_size=(32,)).c_source
    start = np.array([0, 2, 2, 5], np.int32)
    cols = np.array([0, 2, 1, 0, 2], np.int32)
    vals = np.array([1, 2, 3, 4, 5], np.float32)
    x = np.array([1, 10, 100], np.float32)
    y = np.zeros(32, np.float32)
    run(CSR, "spmv", (32,), (32,), np.int32(3), start, cols, vals, x, y)
    np.testing.assert_array_equal(y[:3], [201, 0, 534])


NBODY4 = """
__kernel void accel(__global const float4 *pos, __global float4 *out, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float4 p = pos[i];
    float4 acc = (float4)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float4 d = (float4)(q.xy - p.xy, q.z - p.z, 0.0f);
        d.w = 1.0f;
        float r2 = d.x * d.x + d.y * d.y + d.z * d.z + 0.5f;
        acc += (q.w * rsqrt(r2)) * d;
        acc.w -= d.w;
    }
    out[i] = acc;
}
"""

NORMALIZED = NBODY4.replace("acc += (q.w * rsqrt(r2)) * d;", "acc += normalize(d) * q.w;")
# fast_normalize has no component form in the scalarizer (normalize has one)
FAST_NORMALIZED = NORMALIZED.replace("normalize(d)", "fast_normalize(d)")


def _accel_reference(pos: np.ndarray, normalized: bool) -> np.ndarray:
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    d = np.concatenate([d, np.ones(d.shape[:2] + (1,))], axis=2)
    if normalized:
        scale = pos[None, :, 3] / np.sqrt((d * d).sum(axis=2))
    else:
        scale = pos[None, :, 3] / np.sqrt((d[:, :, :3] ** 2).sum(axis=2) + 0.5)
    acc = (scale[:, :, None] * d).sum(axis=1)
    acc[:, 3] -= pos.shape[0]
    return acc


def test_float4_temporaries_in_an_interchanged_loop_become_scalars():
    k = build_kernel(NBODY4, "accel", local_size=(16,))
    group = k.c_source[k.c_source.index("static void ppcl_group_accel"):]
    assert "float ppcl_u_q__s0 = " in group and "ppcl_u_d__s3 = 0.0f" in group
    assert "__ctx_acc[3][__lid] -= " in group  # the component update of a context vector
    pos = np.random.default_rng(4).random((40, 4), dtype=np.float32)
    out = np.zeros((48, 4), np.float32)
    run(NBODY4, "accel", (48,), (16,), pos, out, np.int32(40))
    np.testing.assert_allclose(out[:40], _accel_reference(pos, False), rtol=2e-5, atol=1e-4)


def test_region_with_a_vector_call_keeps_its_vectors():
    k = build_kernel(FAST_NORMALIZED, "accel", local_size=(16,))
    assert "ppcl_u_q__s0" not in k.c_source  # fast_normalize(d) has no component form
    pos = np.random.default_rng(5).random((40, 4), dtype=np.float32)
    out = np.zeros((48, 4), np.float32)
    run(FAST_NORMALIZED, "accel", (48,), (16,), pos, out, np.int32(40))
    np.testing.assert_allclose(out[:40], _accel_reference(pos, True), rtol=2e-5, atol=1e-4)


def test_region_with_normalize_is_split_into_scalars():
    k = build_kernel(NORMALIZED, "accel", local_size=(16,))
    assert "ppcl_u_q__s0" in k.c_source  # normalize by components and selects
    pos = np.random.default_rng(5).random((40, 4), dtype=np.float32)
    out = np.zeros((48, 4), np.float32)
    run(NORMALIZED, "accel", (48,), (16,), pos, out, np.int32(40))
    np.testing.assert_allclose(out[:40], _accel_reference(pos, True), rtol=2e-5, atol=1e-4)


TILED_NBODY4 = """
__kernel void step(__global const float4 *pos, __global float4 *out, __local float4 *tile,
                   int n, float eps2) {
    int gid = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    float4 p = gid < n ? pos[gid] : (float4)(0.0f);
    float4 acc = (float4)(0.0f);
    for (int base = 0; base < n; base += lsz) {
        tile[lid] = base + lid < n ? pos[base + lid] : (float4)(0.0f);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < min(lsz, n - base); ++j) {
            float4 q = tile[j];
            float4 r;
            r.xyz = q.xyz - p.xyz;
            r.w = 0.0f;
            float inv = native_rsqrt(dot(r, r) + eps2);
            acc.xyz += q.w * inv * inv * inv * r.xyz;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (gid < n) out[gid] = acc;
}
"""


def test_components_of_a_context_vector_updated_together_are_scalarized():
    """``acc.xyz += ...`` on a context vector (the tiled n-body of the vendors' samples): each
    component is updated on its own, so the interchanged loop's lanes vectorize (it kept the
    region as float4 code, 7x slower than pocl)."""
    k = build_kernel(TILED_NBODY4, "step", local_size=(16,))
    group = k.c_source[k.c_source.index("static void ppcl_group_step"):]
    assert "float ppcl_u_q__s0 = " in group and "__ctx_acc[2][__lid] += " in group
    pos = np.random.default_rng(7).random((40, 4), dtype=np.float32)
    out = np.zeros((48, 4), np.float32)
    run(TILED_NBODY4, "step", (48,), (16,), pos, out, LocalMem(16 * 16), np.int32(40),
        np.float32(0.01))
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    inv = 1.0 / np.sqrt((d * d).sum(axis=2) + 0.01)
    want = ((pos[None, :, 3] * inv ** 3)[:, :, None] * d).sum(axis=1)
    np.testing.assert_allclose(out[:40, :3], want, rtol=1e-4, atol=1e-3)
    assert not out[:, 3].any()


NESTED_VECTOR_ASSIGN = """
__kernel void k(__global const float4 *pos, __global float *out, int n) {
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
        float4 d = pos[j] - pos[i];
        float twice = (d = d * 2.0f).x;
        acc += twice + d.x;
    }
    out[i] = acc;
}
"""


def test_assignment_to_a_vector_inside_an_expression_keeps_the_region_as_vectors():
    k = build_kernel(NESTED_VECTOR_ASSIGN, "k", local_size=(8,))
    assert "d__s0" not in k.c_source  # a split vector could not take that store
    pos = np.random.default_rng(6).random((8, 4), dtype=np.float32)
    out = np.zeros(8, np.float32)
    run(NESTED_VECTOR_ASSIGN, "k", (8,), (8,), pos, out, np.int32(8))
    want = (4 * (pos[None, :, 0] - pos[:, None, 0])).sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_work_item_loop_calling_float_clamp_is_vectorized():
    """clamp of floats is selects, not the C library's fminf(fmaxf()), which kept the loop
    around it scalar."""
    source = """__kernel void k(__global const float *x, __global float *y) {
        int i = get_global_id(0);
        y[i] = clamp(x[i], 0.0f, 1.0f);
    }"""
    k = build_kernel(source, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    x = np.array([-1.0, 0.25, 2.0, np.nan] * 16, np.float32)
    y = np.zeros_like(x)
    run(source, "k", (64,), (64,), x, y)
    np.testing.assert_array_equal(y, np.array([0.0, 0.25, 1.0, 0.0] * 16, np.float32))


VECTOR_BUILTINS = """
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o,
                __global int4 *m)
{
    int i = get_global_id(0);
    float4 lo = fmin(a[i], b[i]);
    o[i] = clamp(fmax(lo, (float4)(0.1f)), b[i] * 0.5f, (float4)(1.0f)) + mix(a[i], b[i], 0.25f);
    m[i] = convert_int4(abs_diff(convert_int4(a[i] * 8.0f), convert_int4(b[i] * 8.0f)));
}
"""


@pytest.mark.parametrize("spelling", ["variables", "elements"])
def test_element_wise_builtins_on_vectors_are_split_and_vectorized(spelling: str) -> None:
    """fmin, clamp, mix, abs_diff on float4 and int4: the overloads ran the scalar function a
    lane at a time, which gcc left as scalar code with a branch per lane (a float4 fmin 20x
    slower than pocl); the region is split into scalars and the work-item loop vectorizes,
    with the same values, and PPCL_DEBUG=plans says why."""
    source = VECTOR_BUILTINS
    if spelling == "variables":
        source = source.replace("int i = get_global_id(0);",
                                "int i = get_global_id(0); float4 x = a[i], y = b[i];")
        source = source.replace("fmin(a[i], b[i])", "fmin(x, y)")
    k = build_kernel(source, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 2, (128, 4)).astype(np.float32)
    b = rng.uniform(-1, 2, (128, 4)).astype(np.float32)
    a[0, 0], b[1, 1] = np.nan, np.nan
    o = np.zeros_like(a)
    m = np.zeros((128, 4), np.int32)
    run(source, "k", (128,), (64,), a, b, o, m)
    lo = np.fmin(a, b)
    want = np.minimum(np.maximum(np.fmax(lo, np.float32(0.1)), b * np.float32(0.5)),
                      np.float32(1.0)) + (a + (b - a) * np.float32(0.25))
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    ok = ~(np.isnan(a) | np.isnan(b))
    ai, bi = (np.where(ok, a, 0) * 8).astype(np.int64), (np.where(ok, b, 0) * 8).astype(np.int64)
    np.testing.assert_array_equal(m[ok], np.abs(ai - bi)[ok])
    plans = io.StringIO()
    kernel_ir(compile_source(source, "<test>").module, "k", KernelSpec((64, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=plans)
    assert "scalarize: vectors of a work-item loop split into scalars (it calls " \
        in plans.getvalue(), plans.getvalue()


SATURATING = """
__kernel void k(__global const float4 *a, __global uchar4 *u, __global int4 *r)
{
    int i = get_global_id(0);
    u[i] = convert_uchar4_sat(a[i] * 100.0f);
    r[i] = convert_int4_sat_rte(a[i] * 1e9f);
}
"""


def test_saturating_vector_conversions_are_split_and_vectorized() -> None:
    """convert_uchar4_sat and convert_int4_sat_rte convert lane by lane in C (a plain
    conversion is one __builtin_convertvector): the region is split into scalar conversions
    and vectorizes (3.7x slower than pocl before), with the same values, NaN as 0."""
    k = build_kernel(SATURATING, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    rng = np.random.default_rng(6)
    a = rng.uniform(-4, 4, (128, 4)).astype(np.float32)
    a[0] = [np.nan, np.inf, -np.inf, 2.125]
    u = np.zeros((128, 4), np.uint8)
    r = np.zeros((128, 4), np.int32)
    run(SATURATING, "k", (128,), (64,), a, u, r)
    with np.errstate(invalid="ignore"):
        scaled = np.nan_to_num((a * np.float32(100)).astype(np.float64), nan=0.0)
        wide = np.nan_to_num((a * np.float32(1e9)).astype(np.float64), nan=0.0)
    np.testing.assert_array_equal(u, np.clip(np.trunc(scaled), 0, 255).astype(np.uint8))
    np.testing.assert_array_equal(r, np.clip(np.rint(wide), -2**31, 2**31 - 1).astype(np.int32))


GEOMETRIC = """
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o,
                __global float *q)
{
    int i = get_global_id(0);
    float4 d = a[i] - b[i];
    float l = length(d.xyz);
    o[i] = d / (l + 1.0f);
    q[i] = distance(a[i], b[i]) + dot(a[i], b[i]);
}
"""


def test_geometric_builtins_of_vectors_are_split_and_vectorized() -> None:
    """length, distance and dot of vectors summed their lanes in C a work-item at a time
    (distance 1.4x slower than pocl): the region is split into scalars, the sums written out
    as the C lowering computes them (squares in double, one rounding to float), bit for bit."""
    k = build_kernel(GEOMETRIC, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    rng = np.random.default_rng(8)
    a = rng.uniform(-3, 3, (128, 4)).astype(np.float32)
    b = rng.uniform(-3, 3, (128, 4)).astype(np.float32)
    o = np.zeros_like(a)
    q = np.zeros(128, np.float32)
    run(GEOMETRIC, "k", (128,), (64,), a, b, o, q)

    def length(v: np.ndarray) -> np.ndarray:  # in order, in double, rounded once
        w = v.astype(np.float64)
        total = w[:, 0] * w[:, 0]
        for c in range(1, v.shape[1]):
            total = total + w[:, c] * w[:, c]
        return np.sqrt(total).astype(np.float32)

    d = a - b
    np.testing.assert_array_equal(o, d / (length(d[:, :3]) + np.float32(1))[:, None])
    dots = a[:, 0] * b[:, 0]
    for c in range(1, 4):
        dots = dots + a[:, c] * b[:, c]
    np.testing.assert_array_equal(q, length(d) + dots)


NORMALIZE = """
__kernel void k(__global const float4 *a, __global float4 *o, __global float *n3)
{
    int i = get_global_id(0);
    o[i] = normalize(a[i]);
    float3 v = a[i].xyz * 2.0f;
    n3[i] = normalize(v).y;
}
"""


def _c_normalize(v: np.ndarray) -> np.ndarray:
    """normalize as the C lowering computes it: infinite components +-1, others 0 * x when
    any is infinite; squares summed in order in double; p itself where the sum is 0."""
    with np.errstate(all="ignore"):
        inf = np.isinf(v).any(axis=1, keepdims=True)
        q = np.where(inf, np.where(np.isinf(v), np.copysign(np.float32(1), v),
                                   np.float32(0) * v), v).astype(np.float32)
        w = q.astype(np.float64)
        total = w[:, 0] * w[:, 0]
        for c in range(1, v.shape[1]):
            total = total + w[:, c] * w[:, c]
        out = (w / np.sqrt(total)[:, None]).astype(np.float32)
    return np.where((total == 0)[:, None], v, out)


def test_normalize_of_vectors_is_split_and_vectorized() -> None:
    """normalize of float4 and float3 ran a work-item at a time with its branches for
    infinities and zero length (0.7-0.9x of pocl): by components and selects the work-item
    loop vectorizes, with the same values bit for bit, infinities, zeros and NaN included."""
    k = build_kernel(NORMALIZE, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(k), k.vector_report  # type: ignore[attr-defined]
    rng = np.random.default_rng(9)
    a = rng.uniform(-3, 3, (128, 4)).astype(np.float32)
    a[0] = [0.0, -0.0, 0.0, 0.0]
    a[1] = [np.inf, 1.0, -np.inf, 2.0]
    a[2] = [np.nan, 1.0, 2.0, 3.0]
    a[3] = [1e-30, 0.0, 0.0, -1e-30]
    a[4] = [3e38, 3e38, 0.0, 1.0]
    o = np.zeros_like(a)
    n3 = np.zeros(128, np.float32)
    run(NORMALIZE, "k", (128,), (64,), a, o, n3)
    np.testing.assert_array_equal(o, _c_normalize(a))
    with np.errstate(over="ignore"):
        doubled = a[:, :3] * np.float32(2)
    np.testing.assert_array_equal(n3, _c_normalize(doubled)[:, 1])
    assert np.signbit(o[0, 1])


def test_vector_with_a_braced_initializer_kept_in_a_context_array():
    """A ``float4`` declared with a braced initializer and updated in a loop that the
    work-item loop runs in lock step is kept per work-item; its initializer was printed as
    an assignment of a brace list, which the C compiler refused (SHOC's MD force kernel)."""
    source = """
    __kernel void k(__global float4 *out, __global const float4 *pos, int n,
                    __global const int *nb) {
        uint i = get_global_id(0);
        float4 mine = pos[i];
        float4 f = {1.0f, 2.0f, 3.0f, 4.0f};
        for (int j = 0; j < n; j++) {
            float d = mine.x - pos[nb[j]].x;
            if (d < 0.5f) f.x += d;
        }
        out[i] = f;
    }
    """
    pos = np.random.default_rng(3).random((8, 4), dtype=np.float32)
    nb = np.arange(8, dtype=np.int32)[::-1].copy()
    out = np.zeros((8, 4), np.float32)
    run(source, "k", (8,), (8,), out, pos, np.int32(5), nb)
    d = pos[:, :1] - pos[nb[:5], 0][None, :]
    expected = np.tile(np.float32([1, 2, 3, 4]), (8, 1))
    expected[:, 0] += np.where(d < 0.5, d, 0).sum(axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


# periodic pull streaming in a structure of arrays: the neighbor's x wraps at the edges, so
# its address is consecutive along x but where it wraps (the pragma keeps the loop a loop,
# which the unroll pass would otherwise write out)
WRAPPED = """
__constant int DX[3] = {0, 1, -1};
__kernel void pull(__global const float *src, __global float *dst, int nx, int ny) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny) return;
    float s = 0.0f;
    #pragma unroll 1
    for (int q = 0; q < 3; q++) {
        int xs = x - DX[q];
        int ys = y + q - 1;
        if (xs < 0) xs += nx;
        if (xs >= nx) xs -= nx;
        if (ys < 0) ys += ny;
        if (ys >= ny) ys -= ny;
        s += src[q * nx * ny + ys * nx + xs] * (float)(q + 1);
    }
    dst[y * nx + x] = s;
}
"""


def test_loop_through_a_wrapped_coordinate_is_interchanged():
    f = formed(WRAPPED, (8, 4, 1))
    assert f.interchanged == 1
    assert [loop.interchanged for loop in f.loops] == [True]
    nx, ny = 13, 6
    src = np.random.default_rng(4).random(3 * nx * ny, dtype=np.float32)
    dst = np.zeros(nx * ny, np.float32)
    run(WRAPPED, "pull", (16, 8), (8, 4), src, dst, np.int32(nx), np.int32(ny))
    planes = src.reshape(3, ny, nx)
    want = sum(np.roll(planes[q], (1 - q, [0, 1, -1][q]), axis=(0, 1)) * (q + 1)
               for q in range(3))
    np.testing.assert_allclose(dst, want.reshape(-1), rtol=1e-6)


# each work-item streams its own row through vload4: the k loop must stay in the work-item
# (interchanged, it gathered one float4 per work-item from rows 4 KiB apart, 60x slower)
ROW_VLOAD = """
__kernel void rows(__global const float *a, __global const float *x, __global float *y,
                   int n) {
    int r = get_global_id(0);
    float4 s = (float4)(0.0f);
    for (int c = 0; c < n / 4; c++)
        s += vload4(r * (n / 4) + c, a) * vload4(c, x);
    y[r] = s.x + s.y + s.z + s.w;
}

__kernel void columns(__global const float *a, __global float *y, int n) {
    int c = get_global_id(0);
    float s = 0.0f;
    for (int r = 0; r < 8; r++)
        vstore4(vload4(r * n + c, a) * 2.0f, r * n + c, y);
}
"""


def test_vector_loads_count_as_accesses_for_the_interchange():
    rows = formed(ROW_VLOAD.split("__kernel void columns")[0], (16, 1, 1))
    assert [loop.interchanged for loop in rows.loops] == [False]
    assert "no memory access in it is consecutive along x" in rows.loops[0].reason
    # consecutive float4s along x (a row of vectors per step): the loop moves out
    columns = formed("__kernel void columns" + ROW_VLOAD.split("__kernel void columns")[1],
                     (16, 1, 1))
    assert [loop.interchanged for loop in columns.loops] == [True]
    n, rows_count = 64, 37
    rng = np.random.default_rng(3)
    a = rng.standard_normal(rows_count * n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(rows_count, np.float32)
    run(ROW_VLOAD, "rows", (rows_count,), (1,), a, x, y, np.int32(n))
    want = (a.reshape(rows_count, n).astype(np.float64) @ x.astype(np.float64))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
