"""Normalization (``transforms/normalize.py``): equivalent shapes of a kernel get the same plan,
and the rewritten kernels compute what the written ones do."""

from __future__ import annotations

import io

import numpy as np
import pytest
from launch import run

from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms.normalize import normalize
from ppcl.compiler.transforms.workgroup import FormedKernel
from ppcl.settings import Debug


def formed(source: str, name: str, local_size: tuple[int, int, int]) -> FormedKernel:
    module = compile_source(source).module
    result = kernel_ir(module, name, KernelSpec(local_size), parse_build_options(""),
                       Debug(verify=True))
    assert result.formed is not None
    return result.formed


def loop_plans(source: str, name: str, local_size: tuple[int, int, int]) -> list[str]:
    return [p.plan for p in formed(source, name, local_size).loop_plans]


def normalized(source: str) -> str:
    module = compile_source(source).module
    return print_ir(normalize(module.kernels[0]))


# ---------------------------------------------------------------- interchange: sgemm

SGEMM_HEAD = """
__kernel void mm(const int M, const int N, const int K, __global const float *A,
                 __global const float *B, __global float *C) {
    int col = get_global_id(0);
    int row = get_global_id(1);
"""

SGEMM_SHAPES = {
    "early return": """
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}""",
    "guard block": """
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}""",
    "while loop": """
    if (!(row < M && col < N))
        return;
    float acc = 0.0f;
    int k = 0;
    while (k < K) {
        acc += A[row * K + k] * B[k * N + col];
        k++;
    }
    C[row * N + col] = acc;
}""",
    "do loop": """
    if (row < M) {
        if (col < N) {
            float acc = 0.0f;
            int k = 0;
            do {
                acc += A[row * K + k] * B[k * N + col];
                k += 1;
            } while (k < K);
            C[row * N + col] = acc;
        }
    }
}""",
    "pointer walk": """
    if (row < M && col < N) {
        const __global float *a = A + row * K;
        const __global float *b = B + col;
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += *a * b[0];
            a++;
            b += N;
        }
        C[row * N + col] = acc;
    }
}""",
}


@pytest.mark.parametrize("shape", list(SGEMM_SHAPES))
def test_every_shape_of_sgemm_is_interchanged_and_right(shape):
    source = SGEMM_HEAD + SGEMM_SHAPES[shape]
    assert loop_plans(source, "mm", (16, 2, 1)) == ["interchange"]
    m, n, k = 37, 45, 29  # edges in both dimensions
    rng = np.random.default_rng(3)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    c = np.full((m, n), -1.0, np.float32)
    run(source, "mm", (48, 38), (16, 2), np.int32(m), np.int32(n), np.int32(k), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


# ---------------------------------------------------------------- jam: gemv

GEMV_HEAD = """
__kernel void gemv(const int rows, const int cols, __global const float *A,
                   __global const float *x, __global float *y) {
    int row = get_global_id(0);
"""

GEMV_SHAPES = {
    "early return": """
    if (row >= rows) return;
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
        acc += A[row * cols + k] * x[k];
    y[row] = acc;
}""",
    "guard block": """
    if (row < rows) {
        float acc = 0.0f;
        for (int k = 0; k < cols; ++k)
            acc += A[row * cols + k] * x[k];
        y[row] = acc;
    }
}""",
    "while loop": """
    if (row < rows) {
        float acc = 0.0f;
        int k = 0;
        while (k < cols) {
            acc += A[row * cols + k] * x[k];
            ++k;
        }
        y[row] = acc;
    }
}""",
    "pointer walk": """
    if (row < rows) {
        __global const float *a = A + row * cols;
        __global const float *v = x;
        float acc = 0.0f;
        for (int k = 0; k < cols; ++k) {
            acc += *a * *v;
            a++;
            v++;
        }
        y[row] = acc;
    }
}""",
}


@pytest.mark.parametrize("shape", list(GEMV_SHAPES))
def test_every_shape_of_gemv_is_jammed_and_right(shape):
    source = GEMV_HEAD + GEMV_SHAPES[shape]
    assert loop_plans(source, "gemv", (16, 1, 1)) == ["jam"]
    rows, cols = 61, 37
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    x = rng.standard_normal(cols, dtype=np.float32)
    y = np.full(64, np.float32(-7.0))
    run(source, "gemv", (64,), (16,), np.int32(rows), np.int32(cols), a, x, y)
    # each row summed in k order in float32, as one work-item does: bit for bit
    want = np.add.accumulate((a * x[None, :]).astype(np.float32), axis=1,
                             dtype=np.float32)[:, -1]
    np.testing.assert_array_equal(y[:rows], want)
    assert (y[rows:] == -7.0).all()


# ---------------------------------------------------------------- grid-stride

STRIDE_SHAPES = {
    "for loop": """
__kernel void twice(__global const float *a, __global float *b, const int size) {
    for (int tid = get_global_id(0); tid < size; tid += get_global_size(0))
        b[tid] = a[tid] * 2.0f;
}""",
    "while loop": """
__kernel void twice(__global const float *a, __global float *b, const int size) {
    int tid = get_global_id(0);
    while (tid < size) {
        b[tid] = a[tid] * 2.0f;
        tid += get_global_size(0);
    }
}""",
    # the shape that made gcc refuse the generated C before (a const stride)
    "named const stride": """
__kernel void twice(__global const float *a, __global float *b, const int size) {
    const int numThreads = get_global_size(0);
    for (int tid = get_global_id(0); tid < size; tid += numThreads)
        b[tid] = a[tid] * 2.0f;
}""",
}


@pytest.mark.parametrize("shape", list(STRIDE_SHAPES))
def test_every_shape_of_a_grid_stride_loop_runs_in_lock_step(shape):
    source = STRIDE_SHAPES[shape]
    assert loop_plans(source, "twice", (32, 1, 1)) == ["grid-stride"]
    a = np.arange(1000, dtype=np.float32)
    b = np.zeros(1000, np.float32)
    run(source, "twice", (64,), (32,), a, b, np.int32(1000))
    np.testing.assert_array_equal(b, a * 2)


# ---------------------------------------------------------------- rows

ROWS_SHAPES = {
    "early return": """
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    int i = y * w + x;
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}""",
    "guard block": """
    if (x >= 1 && y >= 1 && x < w - 1 && y < h - 1) {
        int i = y * w + x;
        out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
    }
}""",
    "nested guard blocks": """
    if (x >= 1 && x < w - 1) {
        if (!(y < 1 || y >= h - 1)) {
            int i = y * w + x;
            out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
        }
    }
}""",
}

ROWS_HEAD = """
__kernel void stencil(__global const float *in, __global float *out, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
"""


@pytest.mark.parametrize("shape", list(ROWS_SHAPES))
def test_every_shape_of_a_guarded_stencil_runs_rows_and_is_right(shape):
    source = ROWS_HEAD + ROWS_SHAPES[shape]
    f = formed(source, "stencil", (8, 4, 1))
    assert f.rows and f.plans[:1] == ("work-item loop 1: rows of groups, no jam or grid-stride",)
    w, h = 21, 13
    src = np.random.default_rng(5).random((h, w), dtype=np.float32)
    out = np.zeros((h, w), np.float32)
    run(source, "stencil", (24, 16), (8, 4), src, out, np.int32(w), np.int32(h))
    want = np.zeros_like(out)
    want[1:-1, 1:-1] = 0.5 * src[1:-1, 1:-1] + 0.125 * (
        src[1:-1, :-2] + src[1:-1, 2:] + src[:-2, 1:-1] + src[2:, 1:-1])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_equivalent_shapes_decide_every_scheduling_flag_alike():
    decided = [formed(GEMV_HEAD + body, "gemv", (16, 1, 1)) for body in GEMV_SHAPES.values()]
    assert {(f.rows, f.vectorize, f.interchanged, f.plans) for f in decided} == {
        (False, True, 0, ("work-item loop 1: jam by 4",))}


# ---------------------------------------------------------------- kernels written elsewhere

POLYBENCH = """
__kernel void gemm(__global float *A, __global float *B, __global float *C, float alpha,
                   float beta, int ni, int nj, int nk) {
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nj)) {
        C[i * nj + j] *= beta;
        int k;
        for (k = 0; k < nk; k++)
            C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
    }
}

__kernel void atax_rows(__global const float *A, __global const float *x, __global float *tmp,
                        int nx, int ny) {
    int i = get_global_id(0);
    if (i < nx) {
        float sum = 0.0f;
        int j = 0;
        while (j < ny) {
            sum += A[i * ny + j] * x[j];
            j++;
        }
        tmp[i] = sum;
    }
}

__kernel void atax_columns(__global const float *A, __global float *y, __global const float *tmp,
                           int nx, int ny) {
    int j = get_global_id(0);
    if (j < ny) {
        int i = 0;
        float s = 0.0f;
        while (i < nx) {
            s += A[i * ny + j] * tmp[i];
            i++;
        }
        y[j] = s;
    }
}
"""


def test_polybench_gemm_with_a_block_guard_is_interchanged():
    assert loop_plans(POLYBENCH, "gemm", (16, 4, 1)) == ["interchange"]
    ni, nj, nk = 19, 35, 23
    rng = np.random.default_rng(7)
    a = rng.random((ni, nk), dtype=np.float32)
    b = rng.random((nk, nj), dtype=np.float32)
    c = rng.random((ni, nj), dtype=np.float32)
    want = 1.5 * (a @ b) + 0.5 * c
    run(POLYBENCH, "gemm", (48, 20), (16, 4), a, b, c, np.float32(1.5), np.float32(0.5),
        np.int32(ni), np.int32(nj), np.int32(nk))
    np.testing.assert_allclose(c, want, rtol=1e-5)


def test_atax_style_while_loops_get_jam_and_interchange():
    assert loop_plans(POLYBENCH, "atax_rows", (16, 1, 1)) == ["jam"]
    assert loop_plans(POLYBENCH, "atax_columns", (16, 1, 1)) == ["interchange"]
    nx, ny = 45, 27
    rng = np.random.default_rng(9)
    a = rng.random((nx, ny), dtype=np.float32)
    x = rng.random(ny, dtype=np.float32)
    tmp = np.zeros(48, np.float32)
    run(POLYBENCH, "atax_rows", (48,), (16,), a, x, tmp, np.int32(nx), np.int32(ny))
    np.testing.assert_allclose(tmp[:nx], a @ x, rtol=1e-5)
    y = np.zeros(32, np.float32)
    run(POLYBENCH, "atax_columns", (32,), (16,), a, y, tmp, np.int32(nx), np.int32(ny))
    np.testing.assert_allclose(y[:ny], a.T @ tmp[:nx], rtol=1e-5)


# ---------------------------------------------------------------- what is left as written


def test_a_while_loop_whose_continue_would_skip_the_step_stays():
    source = """
    __kernel void k(__global int *out, int n) {
        int i = 0;
        while (i < n) {
            if (out[i] < 0) { i += 2; continue; }
            out[i] += 1;
            i++;
        }
    }"""
    text = normalized(source)
    assert "while (i < n)" in text and "for" not in text
    out = np.array([0, -1, 5, 7, -3, 0, 1], np.int32)
    run(source, "k", (1,), (1,), out, np.int32(7))
    np.testing.assert_array_equal(out, [1, -1, 5, 8, -3, 0, 2])


def test_a_while_loop_whose_step_reads_a_variable_of_its_body_stays():
    source = """
    __kernel void k(__global uint *out) {
        int i = get_global_id(0);
        uint p = out[2 * i], q = out[2 * i + 1];
        while (q != 0u) {
            uint r = p % q;
            p = q;
            q = r;
        }
        out[2 * i] = p;
    }"""
    text = normalized(source)
    assert "while (q != 0u)" in text and "for" not in text
    out = np.array([12, 18, 35, 14, 7, 0, 1071, 462], np.uint32)
    run(source, "k", (4,), (4,), out)
    np.testing.assert_array_equal(out[::2], [6, 7, 7, 21])


def test_a_do_loop_whose_bound_is_below_its_start_runs_once():
    source = """
    __kernel void k(__global float *out, int n) {
        int i = get_global_id(0);
        float s = 0.0f;
        int k = 3;
        do {
            s += (float)k;
            k++;
        } while (k < n);
        out[i] = s;
    }"""
    assert "for (int k_1 = 3; k_1 < (n > 3 ? n : 4); k_1++)" in normalized(source)
    for n, want in ((0, 3.0), (3, 3.0), (4, 3.0), (6, 3.0 + 4 + 5)):
        out = np.zeros(8, np.float32)
        run(source, "k", (8,), (8,), out, np.int32(n))
        assert (out == want).all(), (n, out)


def test_guards_after_a_barrier_and_pointers_read_after_the_loop_stay():
    source = """
    __kernel void k(__global float *a, __global float *out, __local float *t, int n) {
        t[get_local_id(0)] = a[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) == 0) {
            __global float *p = a;
            for (int k = 0; k < n; k++) {
                out[k] = *p;
                p++;
            }
            out[n] = *p;
        }
    }"""
    text = normalized(source)
    assert "return" not in text and "*p" in text and "p++" in text


def test_a_float_comparison_is_negated_with_not():
    # !(x < y) is not x >= y when x is a NaN
    text = normalized("""
    __kernel void k(__global float *a, float lim) {
        if (a[get_global_id(0)] < lim) {
            a[get_global_id(0)] = 0.0f;
        }
    }""")
    assert "if (!(a[" in text and ">=" not in text


# ---------------------------------------------------------------- what PPCL_DEBUG=plans says


def test_debug_plans_says_per_loop_which_plan_fired_and_why_not_the_others():
    module = compile_source(POLYBENCH + STRIDE_SHAPES["named const stride"]).module
    out = io.StringIO()
    for name in ("gemm", "atax_rows", "twice"):
        local = (16, 4, 1) if name == "gemm" else (16, 1, 1)
        kernel_ir(module, name, KernelSpec(local), parse_build_options(""),
                  Debug(frozenset({"plans"})), stream=out)
    lines = [line for line in out.getvalue().splitlines() if "loop at" in line]
    assert len(lines) == 3
    gemm, atax, twice = lines
    assert gemm.startswith("// ppcl plan gemm: for loop at <source>:") \
        and gemm.endswith(": interchange")
    assert ": jam in work-item loop 1 (no interchange: no memory access in it is " \
        "consecutive along x" in atax
    assert ": grid-stride in work-item loop 1 (no interchange: " in twice
    assert "no jam: the loop's control is not uniform" in twice


def test_normalize_keeps_ir_that_is_already_canonical():
    module = compile_source(GEMV_HEAD + GEMV_SHAPES["early return"]).module
    kernel = module.kernels[0]
    assert isinstance(kernel.body, ir.Block)
    assert normalize(kernel) == kernel


# ---------------------------------------------------------------- divisions by powers of two

BITONIC_STEP = """
__kernel void step(__global uint *a, const uint stage, const uint pass, __global uint *idx) {
    uint tid = get_global_id(0);
    uint dist = 1 << (stage - pass);
    uint left = (tid % dist) + (tid / dist) * 2 * dist;
    uint width = 1 << stage;
    uint up = (tid / width) % 2 == 0;
    uint l = a[left], r = a[left + dist];
    if ((l > r) == up) { a[left] = r; a[left + dist] = l; }
    idx[tid] = left + (tid / (1u << pass)) * 1000000u;
}
"""


def test_unsigned_divisions_by_shifted_ones_become_shifts_and_masks():
    """A bitonic step's ``tid / dist`` and ``tid % dist`` with ``uint dist = 1 << (stage -
    pass)``: a divide per work-item became a shift and a mask (2x on a 2^18 sort), and
    the sort's steps give what they gave with the divisions."""
    text = normalized(BITONIC_STEP)
    assert " / " not in text and " % dist" not in text and ">>" in text
    rng = np.random.default_rng(3)
    n = 256
    for stage in range(8):
        for p in range(stage + 1):
            a = rng.integers(0, 1000, n, dtype=np.uint32)
            idx = np.zeros(n // 2, np.uint32)
            run(BITONIC_STEP, "step", (n // 2,), (16,), a, np.uint32(stage), np.uint32(p),
                idx)
            tid = np.arange(n // 2, dtype=np.uint64)
            dist = 1 << (stage - p)
            left = tid % dist + tid // dist * 2 * dist
            np.testing.assert_array_equal(idx, left + tid // (1 << p) * 1000000)


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's integer division of int64 values (toward zero) and its remainder."""
    q = np.trunc(a / b).astype(np.int64)
    return q, a - q * b


def _signed(x: np.ndarray, s: int) -> np.ndarray:
    d = np.int64(np.int32(np.uint32(1 << s)))  # 1 << 31 is INT_MIN
    q, r = _c_div(x.astype(np.int32).astype(np.int64), d)
    return (q + r).astype(np.uint32)


@pytest.mark.parametrize(("body", "reference"), [
    # signed: -7 / 4 is -1, -7 >> 2 is -2
    ("int d = 1 << s; out[i] = (int)x[i] / d + (int)x[i] % d;", _signed),
    # the divisor changes after its definition
    ("uint d = 1 << s; d += 1; out[i] = x[i] / d;",
     lambda x, s: x // np.uint32((1 << s) + 1)),
    # the count changes after the divisor's definition
    ("uint t = s; uint d = 1 << t; t = t + 1; out[i] = x[i] / d;",
     lambda x, s: x // np.uint32(1 << s)),
    # a 32-bit shift converted to a 64-bit unsigned type: not a power of two at count 31
    ("ulong d = 1 << s; out[i] = (uint)((ulong)x[i] / d);",
     lambda x, s: (x.astype(np.uint64) // np.uint64(int(np.int32(np.uint32(1 << s))) %
                                                    2 ** 64)).astype(np.uint32)),
    # the divisor's address is taken
    ("uint d = 1 << s; uint *p = &d; *p = 3; out[i] = x[i] / d;", lambda x, s: x // 3),
])
def test_divisions_that_are_not_by_a_steady_power_of_two_stay(body, reference):
    source = (f"__kernel void k(__global const uint *x, __global uint *out, uint s) "
              f"{{ size_t i = get_global_id(0); {body} }}")
    text = normalized(source)
    assert " / " in text or " % " in text
    x = np.array([7, 4000000000, 12345, 1, 0, 3999999999, 77, 8], np.uint32)
    for s in (0, 2, 31):
        got = np.zeros(8, np.uint32)
        run(source, "k", (8,), (8,), x, got, np.uint32(s))
        np.testing.assert_array_equal(got, reference(x, s))
