"""End-to-end CPU kernels: OpenCL C -> work-group C -> gcc -> run through the runtime, compared
with numpy.

Barrier kernels run twice: with the uniformity analysis (lock-step regions) and without it
(everything masked), which must give the same results.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_sources import REDUCE
from launch import LocalMem, build_kernel, run

MODES = [True, False]  # use the uniformity analysis or run everything masked


RNG = np.random.default_rng(1234)

ELEMENTWISE = """
__kernel void scale_f(__global float *a, __global const float *b, float s, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    a[i] = a[i] * s + b[i];
}
__kernel void mix_i(__global int *a, __global const int *b) {
    size_t i = get_global_id(0);
    a[i] = (a[i] ^ b[i]) + (int)i;
}
__kernel void axpy_d(__global double *y, __global const double *x, double alpha) {
    size_t i = get_global_id(0);
    y[i] = alpha * x[i] + y[i];
}
__kernel void add4(__global float4 *a, __global const float4 *b, float4 k) {
    size_t i = get_global_id(0);
    a[i] = a[i] + b[i] * k;
}
__kernel void uchar_sat(__global uchar *a, __global const uchar *b) {
    size_t i = get_global_id(0);
    a[i] = add_sat(a[i], b[i]);
}
"""


@pytest.mark.parametrize("local", [1, 7, 64])
def test_elementwise_float_with_early_return(local):
    n = 100
    a = RNG.random(n + 40).astype(np.float32)
    b = RNG.random(n + 40).astype(np.float32)
    expect = a.copy()
    expect[:n] = a[:n] * np.float32(1.5) + b[:n]
    gsize = (n + local - 1) // local * local
    run(ELEMENTWISE, "scale_f", (gsize,), (local,), a, b, np.float32(1.5), np.int32(n))
    np.testing.assert_allclose(a, expect, rtol=1e-6)


def test_elementwise_int_double_vector_uchar():
    n = 56
    a = RNG.integers(-100, 100, n).astype(np.int32)
    b = RNG.integers(-100, 100, n).astype(np.int32)
    expect = (a ^ b) + np.arange(n, dtype=np.int32)
    run(ELEMENTWISE, "mix_i", (n,), (8,), a, b)
    np.testing.assert_array_equal(a, expect)

    y, x = RNG.random(n), RNG.random(n)
    expect_d = 0.25 * x + y
    run(ELEMENTWISE, "axpy_d", (n,), (8,), y, x, np.float64(0.25))
    np.testing.assert_allclose(y, expect_d)

    a4 = RNG.random((n, 4)).astype(np.float32)
    b4 = RNG.random((n, 4)).astype(np.float32)
    kvec = np.array([1, 2, 3, 4], np.float32)
    expect4 = a4 + b4 * kvec
    run(ELEMENTWISE, "add4", (n,), (8,), a4, b4, kvec)
    np.testing.assert_allclose(a4, expect4, rtol=1e-6)

    ua = RNG.integers(0, 256, n).astype(np.uint8)
    ub = RNG.integers(0, 256, n).astype(np.uint8)
    expect_u = np.minimum(ua.astype(int) + ub, 255).astype(np.uint8)
    run(ELEMENTWISE, "uchar_sat", (n,), (8,), ua, ub)
    np.testing.assert_array_equal(ua, expect_u)




@pytest.mark.parametrize("uniform", MODES)
@pytest.mark.parametrize("local", [1, 64, 256, 1024])
def test_local_tree_reduction(uniform, local):
    groups = 3
    a = RNG.random(local * groups).astype(np.float32)
    out = np.zeros(groups, np.float32)
    run(REDUCE, "reduce", (local * groups,), (local,), a, out, LocalMem(4 * local),
        uniformity=uniform)
    np.testing.assert_allclose(out, a.reshape(groups, local).sum(1), rtol=1e-5)


SCAN = """
__kernel void scan(__global const int *in, __global int *out, __local int *a, __local int *b) {
    int lid = get_local_id(0);
    int n = get_local_size(0);
    a[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int *src = a;
    __local int *dst = b;
    for (int offset = 1; offset < n; offset *= 2) {
        int v = src[lid];
        if (lid >= offset) v += src[lid - offset];
        dst[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local int *t = src; src = dst; dst = t;
    }
    out[get_global_id(0)] = src[lid];
}
"""


@pytest.mark.parametrize("uniform", MODES)
@pytest.mark.parametrize("local", [7, 64])
def test_inclusive_scan(uniform, local):
    groups = 3
    a = RNG.integers(-50, 50, local * groups).astype(np.int32)
    out = np.zeros_like(a)
    run(SCAN, "scan", (local * groups,), (local,), a, out, LocalMem(4 * local),
        LocalMem(4 * local), uniformity=uniform)
    np.testing.assert_array_equal(out, np.cumsum(a.reshape(groups, local), axis=1).ravel())


MATMUL_TILED = """
#define T 8
__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int n) {
    __local float As[T][T];
    __local float Bs[T][T];
    int row = get_global_id(1), col = get_global_id(0);
    int ly = get_local_id(1), lx = get_local_id(0);
    float acc = 0.0f;
    for (int t = 0; t < n / T; t++) {
        As[ly][lx] = A[row * n + t * T + lx];
        Bs[ly][lx] = B[(t * T + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < T; k++) acc += As[ly][k] * Bs[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
"""


@pytest.mark.parametrize("uniform", MODES)
def test_tiled_matmul(uniform):
    n = 24
    a = RNG.random((n, n)).astype(np.float32)
    b = RNG.random((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    run(MATMUL_TILED, "matmul", (n, n), (8, 8), a, b, c, np.int32(n), uniformity=uniform)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    k = build_kernel(MATMUL_TILED, "matmul", local_size=(8, 8), use_uniformity=uniform)
    assert k.local_mem_static_bytes >= 2 * 8 * 8 * 4


CONTROL = """
__kernel void loops(__global int *out, __local int *s, int rounds) {
    int lid = get_local_id(0);
    int n = get_local_size(0);
    int acc = lid;
    int r = 0;
    while (r < rounds) {
        s[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += s[(lid + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
        r++;
    }
    int j = 0;
    do {
        for (int q = 0; q < 2; q++) {
            s[lid] = acc + q;
            barrier(CLK_LOCAL_MEM_FENCE);
            acc = s[n - 1 - lid] - j;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        j++;
    } while (j < 2);
    if (rounds > 2) {
        s[lid] = acc * 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = s[0];
    } else {
        s[lid] = acc * 3;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = s[n - 1];
    }
    out[get_global_id(0)] = acc;
}
"""


def control_reference(n: int, rounds: int, groups: int) -> np.ndarray:
    out = []
    for _ in range(groups):
        acc = np.arange(n, dtype=np.int64)
        for _ in range(rounds):
            acc = acc + np.roll(acc, -1)
        for j in range(2):
            for q in range(2):
                s = acc + q
                acc = s[::-1] - j
        acc = np.full(n, (acc * 2)[0]) if rounds > 2 else np.full(n, (acc * 3)[-1])
        out.append(acc)
    return np.concatenate(out).astype(np.int32)


@pytest.mark.parametrize("uniform", MODES)
@pytest.mark.parametrize("rounds", [0, 3])
def test_barriers_in_uniform_loops_and_branches(uniform, rounds):
    n = 16
    out = np.zeros(2 * n, np.int32)
    run(CONTROL, "loops", (2 * n,), (n,), out, LocalMem(4 * n), np.int32(rounds),
        uniformity=uniform)
    np.testing.assert_array_equal(out, control_reference(n, rounds, 2))


DIVERGENT = """
__kernel void relax(__global float *vals, __global const int *budget, __local float *buf,
                    __local int *active) {
    int lid = get_local_id(0);
    int lsz = get_local_size(0);
    int gid = get_global_id(0);
    int my_budget = budget[gid];
    float v = vals[gid];
    int iter = 0;
    for (;;) {
        if (lid == 0) *active = 0;
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (iter < my_budget) {
            float n = buf[(lid + 1) % lsz];
            v = 0.5f * (v + n);
            iter++;
            atomic_inc(active);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int still_active = *active;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (still_active == 0) break;
    }
    vals[gid] = v;
}
__kernel void varying_exit(__global int *out, __global const int *limit, __local int *s) {
    int lid = get_local_id(0);
    int total = 0;
    for (int i = 0; i < 100; i++) {
        if (i >= limit[get_global_id(0)]) {
            out[get_global_id(0)] = total;
            return;
        }
        if (i == 2 && lid == 1) break;
        if ((i & 1) && lid == 2) continue;
        s[lid] = i;
        barrier(CLK_LOCAL_MEM_FENCE);
        total += s[lid] + 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = -total;
}
"""


@pytest.mark.parametrize("uniform", MODES)
def test_barrier_loop_with_uniform_break_after_divergent_work(uniform):
    n = 8
    vals = RNG.random(2 * n).astype(np.float32)
    budget = RNG.integers(0, 5, 2 * n).astype(np.int32)
    expect = vals.copy().reshape(2, n)
    bud = budget.reshape(2, n)
    for g in range(2):
        v = expect[g].copy()
        it = np.zeros(n, int)
        while True:
            buf = v.copy()
            act = it < bud[g]
            nb = buf[(np.arange(n) + 1) % n]
            v = np.where(act, np.float32(0.5) * (v + nb), v).astype(np.float32)
            it += act
            if not act.any():
                break
        expect[g] = v
    run(DIVERGENT, "relax", (2 * n,), (n,), vals, budget, LocalMem(4 * n), LocalMem(4),
        uniformity=uniform)
    np.testing.assert_allclose(vals, expect.ravel(), rtol=1e-6)


@pytest.mark.parametrize("uniform", MODES)
def test_barrier_loop_with_varying_return_break_continue(uniform):
    n = 4
    limit = np.array([5, 1, 7, 100, 3, 0, 9, 4], np.int32)
    out = np.zeros(8, np.int32)
    run(DIVERGENT, "varying_exit", (8,), (n,), out, limit, LocalMem(4 * n), uniformity=uniform)
    expect = []
    for gid, lim in enumerate(limit):
        lid = gid % n
        total, result = 0, None
        for i in range(100):
            if i >= lim:
                result = total
                break
            if i == 2 and lid == 1:
                break
            if (i & 1) and lid == 2:
                continue
            total += i + 1
        expect.append(result if result is not None else -total)
    np.testing.assert_array_equal(out, expect)


EARLY = """
__kernel void block_sum_active(__global const int *in, __global int *out, const uint active_groups,
                               __local int *scratch) {
    if (get_group_id(0) >= active_groups) return;
    uint lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int s = 0;
        for (uint i = 0; i < get_local_size(0); i++) s += scratch[i];
        out[get_group_id(0)] = s;
    }
}
"""


@pytest.mark.parametrize("uniform", MODES)
def test_early_return_then_barrier(uniform):
    a = RNG.integers(0, 10, 64).astype(np.int32)
    out = np.full(4, -1, np.int32)
    run(EARLY, "block_sum_active", (64,), (16,), a, out, np.uint32(2), LocalMem(64),
        uniformity=uniform)
    np.testing.assert_array_equal(out, [a[:16].sum(), a[16:32].sum(), -1, -1])


HISTOGRAM = """
__kernel void histogram(__global const uchar *data, __global uint *hist, __local uint *bins, int n) {
    int lid = get_local_id(0);
    for (int b = lid; b < 16; b += get_local_size(0)) bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int gid = get_global_id(0);
    if (gid < n) atomic_inc(&bins[data[gid] & 15]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < 16; b += get_local_size(0)) atomic_add(&hist[b], bins[b]);
}
"""


@pytest.mark.parametrize("uniform", MODES)
def test_histogram_local_and_global_atomics(uniform):
    n = 100
    data = RNG.integers(0, 256, n).astype(np.uint8)
    hist = np.zeros(16, np.uint32)
    run(HISTOGRAM, "histogram", (105,), (7,), data, hist, LocalMem(64), np.int32(n),
        uniformity=uniform)
    np.testing.assert_array_equal(hist, np.bincount(data & 15, minlength=16))


MISC = """
typedef struct { float scale; int offset; float4 bias; } params_t;
__constant float table[4] = {1.0f, 10.0f, 100.0f, 1000.0f};
float twice(float x) { return 2.0f * x; }
size_t my_gid(void) { return get_global_id(0) + get_global_id(1) * get_global_size(0); }
__kernel void misc(__global float *out, params_t p) {
    size_t i = my_gid();
    out[i] = twice(p.scale) * table[i % 4] + (float)p.offset + p.bias.y;
}
__kernel void ids3(__global int *out) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t w = get_global_size(0), h = get_global_size(1);
    size_t lin = ((z - get_global_offset(2)) * h + (y - get_global_offset(1))) * w
                 + (x - get_global_offset(0));
    out[lin] = (int)(x + 100 * y + 10000 * z + 1000000 * get_local_id(0) + (int)get_work_dim());
}
"""


def test_helpers_structs_and_constant_tables():
    out = np.zeros(32, np.float32)
    params = np.zeros(1, dtype=[("scale", "f4"), ("offset", "i4"), ("pad", "i4", 2),
                                ("bias", "f4", 4)])
    params["scale"], params["offset"], params["bias"] = 1.5, 7, (0, 0.25, 0, 0)
    run(MISC, "misc", (8, 4), (4, 2), out, params)
    i = np.arange(32)
    np.testing.assert_allclose(out, 3.0 * np.array([1, 10, 100, 1000])[i % 4] + 7.25)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_ranges_with_global_offsets(dims):
    local = {1: (4,), 2: (4, 2), 3: (2, 2, 2)}[dims]
    gsize = {1: (12,), 2: (8, 6), 3: (4, 6, 2)}[dims]
    offset = {1: (5,), 2: (3, 1), 3: (1, 2, 3)}[dims]
    out = np.zeros(int(np.prod(gsize)), np.int32)
    run(MISC, "ids3", gsize, local, out, offset=offset)
    g = [np.arange(gsize[d]) + offset[d] if d < dims else np.zeros(1, int) for d in range(3)]
    z, y, x = np.meshgrid(g[2], g[1], g[0], indexing="ij")
    lx = (x - offset[0]) % local[0]
    expect = x + 100 * y + 10000 * z + 1000000 * lx + dims
    np.testing.assert_array_equal(out, expect.ravel())


def test_barrier_in_helper_synchronizes_the_group():
    src = """
void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }
__kernel void k(__global int *a, __local int *t) {
    int l = get_local_id(0);
    t[l] = l * 10;
    sync();
    a[get_global_id(0)] = t[get_local_size(0) - 1 - l];
}
"""
    a = np.zeros(8, np.int32)
    run(src, "k", (8,), (4,), a, LocalMem(16))
    np.testing.assert_array_equal(a, [30, 20, 10, 0, 30, 20, 10, 0])


ASYNC_PRINTF = """
__kernel void copy_rev(__global const float *in, __global float *out, __local float *t) {
    event_t e = async_work_group_copy(t, in + get_group_id(0) * get_local_size(0),
                                      get_local_size(0), 0);
    wait_group_events(1, &e);
    out[get_global_id(0)] = t[get_local_size(0) - 1 - get_local_id(0)];
    if (get_global_id(0) == 1) printf("v=%v4f i=%d\\n", (float4)(1.0f, 2.0f, 3.0f, 4.0f), 7);
}
"""


@pytest.mark.parametrize("uniform", MODES)
def test_async_copy_and_printf(uniform, capfd):
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    run(ASYNC_PRINTF, "copy_rev", (16,), (8,), a, out, LocalMem(32), uniformity=uniform)
    np.testing.assert_array_equal(out, a.reshape(2, 8)[:, ::-1].ravel())
    assert "v=1.000000,2.000000,3.000000,4.000000 i=7" in capfd.readouterr().out


def test_fast_relaxed_math_builds_a_separate_fast_kernel():
    src = """
    __kernel void k(__global float *a) {
        size_t i = get_global_id(0);
        a[i] = native_sin(a[i]) + sqrt(a[i]) / (1.0f + a[i]);
    }"""
    precise = build_kernel(src, "k", local_size=(8,))
    fast = build_kernel(src, "k", "-cl-fast-relaxed-math", local_size=(8,))
    assert precise.library is not fast.library
    x = RNG.random(64).astype(np.float32) + np.float32(0.5)
    expect = np.sin(x) + np.sqrt(x) / (1 + x)
    for options in ("", "-cl-fast-relaxed-math"):
        a = x.copy()
        run(src, "k", (64,), (8,), a, options=options)
        np.testing.assert_allclose(a, expect, rtol=1e-4)
    # loading a fast-math kernel leaves this process's denormals alone
    assert np.float64(5e-324) * 1.0 != 0.0


NARROW_ID = """
__kernel void ids(__global int *out, ulong base) {
    int i = get_global_id(0);
    out[get_global_id(0) - base] = i;
}
"""


def test_int_global_ids_beyond_int_max_need_the_wide_build():
    offset = 2**31 + 5
    expect = (np.arange(16, dtype=np.int64) + offset).astype(np.int32)  # modulo, as C converts
    # the small range first: the program then holds the 32-bit build, which the launch
    # beyond INT_MAX must not reuse (its ids would wrap and the stores land elsewhere)
    small = np.zeros(16, np.int32)
    run(NARROW_ID, "ids", (16,), (8,), small, np.uint64(3), offset=(3,))
    np.testing.assert_array_equal(small, np.arange(3, 19, dtype=np.int32))
    out = np.zeros(16, np.int32)
    run(NARROW_ID, "ids", (16,), (8,), out, np.uint64(offset), offset=(offset,))
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("uniform", MODES)
def test_every_local_atomic_operation(uniform):
    """Local atomics run without locked instructions (one thread runs a whole group); each
    operation still gives what the OpenCL definition gives."""
    from pathlib import Path

    source = (Path(__file__).parent / "kernels" / "atomics_local_uint.cl").read_text()
    local, groups = 32, 3
    keys = RNG.integers(0, 1 << 32, local * groups, dtype=np.uint64).astype(np.uint32)
    stats = np.zeros((groups, 4), np.uint32)
    balance = np.zeros(groups, np.int32)
    run(source, "local_atomic_stats", (local * groups,), (local,), keys, stats, balance,
        uniformity=uniform)
    for g in range(groups):
        part = keys[g * local:(g + 1) * local]
        lor = np.bitwise_or.reduce(part)
        land = np.bitwise_and.reduce(part)
        lxor = np.bitwise_xor.reduce(part)
        count = np.uint32((part & 1).sum())
        np.testing.assert_array_equal(
            stats[g], [part.min(), part.max(), lor ^ land, count + (lxor & 1)])
        assert balance[g] == int(((part & 2) != 0).sum()) * 2 - local


KERNEL_CALLS = """
__kernel void put(__global float *o, int i);
__kernel void k(__global float *o) {
    put(o, get_global_id(0) + 1);
    if (get_global_id(0) == 0) put(o, 0);
}
__kernel void put(__global float *o, int i) { o[i] = 7.0f + get_global_id(0); }
"""


def test_a_kernel_calls_a_kernel_as_a_function():
    """OpenCL C 1.2 lets a kernel call another kernel: the call runs its body as a function
    (the C unit had no such function: 'undefined symbol' at the first launch), and the
    called kernel still launches on its own."""
    out = np.zeros(9, np.float32)
    run(KERNEL_CALLS, "k", (8,), (4,), out)
    np.testing.assert_array_equal(out, [7, *(7 + np.arange(8))])
    run(KERNEL_CALLS, "put", (1,), (1,), out, np.int32(8))
    assert out[8] == 7


def test_a_kernel_with_local_variables_cannot_be_called():
    from ppcl.compiler.diagnostics import CompileError
    from ppcl.compiler.frontend import compile_source

    source = ("__kernel void a(__global float *o) { __local float t[4]; t[0] = 1; o[0] = t[0]; }\n"
              "__kernel void k(__global float *o) { a(o); }\n")
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl")
    assert "t.cl:2:38" in str(info.value) and "declares __local variables" in str(info.value)
