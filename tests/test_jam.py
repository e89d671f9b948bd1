"""Work-items jammed through a per-work-item float reduction (``transforms/jam.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from launch import build_kernel, run

from ppcl.bench_source import SOURCE

NORMS = """
__kernel void norms(__global const double *v, __global double *out, int n, int len) {
    int i = get_global_id(0);
    if (i >= n) return;
    const int base = i * len;
    double s = 0.0;
    for (int k = 0; k < len; k += 2) {
        double t = v[base + k];
        s += t * t;
    }
    out[i] = sqrt(s);
}"""


def in_order_row_sums(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's sum added in k order in float32, as one work-item does."""
    products = (a * x[None, :]).astype(np.float32)
    return np.add.accumulate(products, axis=1, dtype=np.float32)[:, -1]


@pytest.mark.parametrize("rows", [64, 61, 3])
def test_jammed_rows_give_the_in_order_sums_bit_for_bit(rows):
    k = build_kernel(SOURCE, "gemv", local_size=(16,))  # the benchmark suite's gemv
    assert "__ppcl_jam" in k.c_source and "acc__j3" in k.c_source
    cols = 37
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    x = rng.standard_normal(cols, dtype=np.float32)
    y = np.full(64, np.float32(-7.0))
    run(SOURCE, "gemv", (64,), (16,), np.int32(rows), np.int32(cols), a, x, y)
    np.testing.assert_array_equal(y[:rows], in_order_row_sums(a, x))
    assert (y[rows:] == -7.0).all()  # exited work-items store nothing


def test_jammed_double_sum_with_a_loop_local_temporary():
    k = build_kernel(NORMS, "norms", local_size=(8,))
    assert "s__j0" in k.c_source
    n, length = 21, 10
    v = np.random.default_rng(1).random((n, length))
    out = np.zeros(24)
    run(NORMS, "norms", (24,), (8,), v, out, np.int32(n), np.int32(length))
    np.testing.assert_allclose(out[:n], np.sqrt((v[:, ::2] ** 2).sum(axis=1)), rtol=1e-14)



def test_jammed_loop_bound_from_a_prefix_variable():
    # the loop starts at a uniform value declared in the prefix: each jammed work-item has
    # its own copy of it, and the loop header, printed once, must name one of them
    src = """
    __kernel void tail_sums(__global const float *a, __global float *out, int n, int cols) {
        int row = get_global_id(0);
        const int half_cols = cols / 2;
        float acc = 0.0f;
        if (row >= n) return;
        for (int k = half_cols; k < cols; ++k) acc += a[row * cols + k];
        out[row] = acc;
    }"""
    k = build_kernel(src, "tail_sums", local_size=(8,))
    assert "__ppcl_jam" in k.c_source
    n, cols = 21, 13
    a = np.random.default_rng(2).random((n, cols), dtype=np.float32)
    out = np.zeros(24, np.float32)
    run(src, "tail_sums", (24,), (8,), a, out, np.int32(n), np.int32(cols))
    want = np.add.accumulate(a[:, cols // 2:], axis=1, dtype=np.float32)[:, -1]
    np.testing.assert_array_equal(out[:n], want)


def test_loop_counter_declared_in_the_prefix_is_shared_by_the_copies():
    # the jammed header runs once for the four copies: a counter declared before the loop is
    # declared once, not copied, so every copy's body and the code after the loop see it move
    src = """
    __kernel void sums(__global const float *a, __global float *out, int cols) {
        int row = get_global_id(0);
        int k;
        float acc = 0.0f;
        for (k = 1; k < cols; k++) acc += a[row * cols + k] * k;
        out[row] = acc + k;
    }"""
    assert "__ppcl_jam" in build_kernel(src, "sums", local_size=(8,)).c_source
    rows, cols = 16, 7
    a = np.random.default_rng(3).random((rows, cols), dtype=np.float32)
    out = np.zeros(rows, np.float32)
    run(src, "sums", (rows,), (8,), a, out, np.int32(cols))
    terms = (a[:, 1:] * np.arange(1, cols, dtype=np.float32)).astype(np.float32)
    want = np.add.accumulate(terms, axis=1, dtype=np.float32)[:, -1] + np.float32(cols)
    np.testing.assert_array_equal(out, want)

@pytest.mark.parametrize("loop, want", [
    # the trip count varies between work-items
    ("for (int k = 0; k < i; ++k) acc += a[i * n + k];",
     lambda a: np.tril(a, -1).sum(axis=1)),
    # an integer sum vectorizes by itself
    ("for (int k = 0; k < n; ++k) iacc += (int)a[i * n + k];",
     lambda a: a.sum(axis=1)),
])
def test_loops_that_are_not_jammed(loop, want):
    source = f"""
    __kernel void r(__global float *a, __global float *out, int n) {{
        int i = get_global_id(0);
        float acc = 0.0f;
        int iacc = 0;
        {loop}
        out[i] = acc + iacc;
    }}"""
    k = build_kernel(source, "r", local_size=(8,))
    assert "__ppcl_jam" not in k.c_source
    n = 8
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros(8, np.float32)
    run(source, "r", (8,), (8,), a.copy(), out, np.int32(n))
    np.testing.assert_array_equal(out, want(a))


# Published GPU code often sums straight into the output element, `out[r] += ...`, instead of
# a private accumulator. The jam takes such a sum (a chain of adds through memory) as well.
MEMORY_SUM = """
__kernel void dots(__global const float *m, __global const float *v, __global float *out,
                   int rows, int cols) {
    int r = get_global_id(0);
    if (r < rows) {
        int c;
        for (c = 0; c < cols; c++) {
            out[r] += m[r * cols + c] * v[c];
        }
    }
}"""


def in_order_sums_from(start: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """``start[r] + terms[r, 0] + terms[r, 1] + ...`` added in that order in float32."""
    both = np.concatenate([start[:, None], terms.astype(np.float32)], axis=1)
    return np.add.accumulate(both, axis=1, dtype=np.float32)[:, -1]


@pytest.mark.parametrize("rows", [64, 61])
def test_a_sum_into_memory_is_jammed_and_kept_in_a_register(rows):
    k = build_kernel(MEMORY_SUM, "dots", local_size=(16,))
    assert "__ppcl_jam" in k.c_source and "__ppcl_acc__j3" in k.c_source
    cols = 64  # a power-of-two row length: each work-item streams its own row
    rng = np.random.default_rng(rows)
    m = rng.standard_normal((rows, cols), dtype=np.float32)
    v = rng.standard_normal(cols, dtype=np.float32)
    out = np.full(64, np.float32(0.5))
    run(MEMORY_SUM, "dots", (64,), (16,), m, v, out, np.int32(rows), np.int32(cols))
    want = in_order_sums_from(np.full(rows, np.float32(0.5)), m * v[None, :])
    np.testing.assert_array_equal(out[:rows], want)
    assert (out[rows:] == 0.5).all()  # work-items past the guard store nothing


def test_a_scaling_before_the_sum_runs_once_per_work_item_in_2d_groups():
    # `c *= beta` has effects: it runs after every copy passed the guard, never twice
    src = """
    __kernel void scaled(__global const float *a, __global float *c, float beta, int n) {
        int j = get_global_id(0);
        int i = get_global_id(1);
        if ((i < n) && (j < n)) {
            c[i * n + j] *= beta;
            for (int k = 0; k < n; k++)
                c[i * n + j] += a[i * n + k] * a[j * n + k];
        }
    }"""
    k = build_kernel(src, "scaled", local_size=(8, 2))
    assert "__ppcl_jam" in k.c_source and "__nrow" not in k.c_source  # a jam, not rows
    n = 14  # groups past the edge take the one-at-a-time path
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, n), dtype=np.float32)[:n]
    c = rng.standard_normal((16, 16), dtype=np.float32)
    start = c.copy()
    flat = c.reshape(-1)
    run(src, "scaled", (16, 16), (8, 2), np.ascontiguousarray(a), flat, np.float32(1.5),
        np.int32(n))
    got = flat[:n * n].reshape(n, n)
    scaled_c = (start.reshape(-1)[:n * n].reshape(n, n) * np.float32(1.5)).astype(np.float32)
    terms = (a[:, None, :] * a[None, :, :]).astype(np.float32)
    want = np.add.accumulate(np.concatenate([scaled_c[:, :, None], terms], axis=2), axis=2,
                             dtype=np.float32)[:, :, -1]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(flat[n * n:], start.reshape(-1)[n * n:])


def test_two_sums_into_memory_are_jammed_in_memory():
    # two elements updated in one loop may be one element (the same buffer passed twice):
    # both stay in memory, each update after the other as written
    src = """
    __kernel void two(__global const float *a, __global const float *b, __global float *s,
                      __global float *t, int n) {
        int r = get_global_id(0);
        for (int k = 0; k < n; k++) {
            s[r] += a[r * n + k];
            t[r] += b[r * n + k];
        }
    }"""
    k = build_kernel(src, "two", local_size=(8,))
    assert "__ppcl_jam" in k.c_source and "__ppcl_acc" not in k.c_source
    n = 32
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, n), dtype=np.float32)
    b = rng.standard_normal((16, n), dtype=np.float32)
    s = np.ones(16, np.float32)
    t = np.full(16, np.float32(2.0))
    run(src, "two", (16,), (8,), a, b, s, t, np.int32(n))
    np.testing.assert_array_equal(s, in_order_sums_from(np.ones(16, np.float32), a))
    np.testing.assert_array_equal(t, in_order_sums_from(np.full(16, np.float32(2.0)), b))


def test_a_sum_into_memory_beside_another_store_stays_in_memory():
    # the body stores elsewhere too, which may be the summed element: no register copy
    src = """
    __kernel void sum_and_clear(__global float *a, __global float *out, int n) {
        int r = get_global_id(0);
        for (int k = 0; k < n; k++) {
            out[r] += a[r * n + k];
            a[r * n + k] = 0.0f;
        }
    }"""
    k = build_kernel(src, "sum_and_clear", local_size=(8,))
    assert "__ppcl_jam" in k.c_source and "__ppcl_acc" not in k.c_source
    n = 16
    a = np.random.default_rng(6).standard_normal((16, n), dtype=np.float32)
    out = np.zeros(16, np.float32)
    run(src, "sum_and_clear", (16,), (8,), a.copy(), out, np.int32(n))
    np.testing.assert_array_equal(out, in_order_sums_from(np.zeros(16, np.float32), a))
