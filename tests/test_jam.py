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


def test_loop_counter_declared_in_the_prefix_is_not_jammed():
    # the jammed header runs once for the four copies, so each copy's own counter, read in
    # its body and after the loop, would never change
    src = """
    __kernel void sums(__global const float *a, __global float *out, int cols) {
        int row = get_global_id(0);
        int k;
        float acc = 0.0f;
        for (k = 1; k < cols; k++) acc += a[row * cols + k] * k;
        out[row] = acc + k;
    }"""
    rows, cols = 16, 7
    a = np.random.default_rng(3).random((rows, cols), dtype=np.float32)
    out = np.zeros(rows, np.float32)
    run(src, "sums", (rows,), (8,), a, out, np.int32(cols))
    terms = (a[:, 1:] * np.arange(1, cols, dtype=np.float32)).astype(np.float32)
    want = np.add.accumulate(terms, axis=1, dtype=np.float32)[:, -1] + np.float32(cols)
    np.testing.assert_array_equal(out, want)

@pytest.mark.parametrize("loop, want", [
    # a store in the loop: the work-items' stores would interleave
    ("for (int k = 0; k < n; ++k) { acc += a[i * n + k]; a[i * n + k] = 0.0f; }",
     lambda a: a.sum(axis=1)),
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
