"""Grid-stride loops run by the work-items of a group in lock step (``plan_stride``)."""

from __future__ import annotations

import numpy as np
import pytest
from launch import LocalMem, build_kernel, run

HISTOGRAM = """
__kernel void hist(__global const uchar *data, __global uint *bins, const int n) {
    __local uint local_bins[64];
    for (int b = get_local_id(0); b < 64; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i] & 63]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < 64; b += get_local_size(0))
        atomic_add(&bins[b], local_bins[b]);
}
"""


FILL = """
__kernel void fill(__global int *out, int first, int last) {
    for (int i = first + get_global_id(0); i <= last; i += get_global_size(0))
        out[i] = i * 3 + (int)get_group_id(0);
}"""

SUMS = """
__kernel void sums(__global const float *a, __global float *out, int n) {
    float s = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        s += a[i];
    out[get_global_id(0)] = s;
}"""

GRID_REDUCE = """
__kernel void red(__global const float *in, __global float *out, __local float *part,
                  const int size) {
    const int numThreads = get_global_size(0);
    float sum = 0.0f;
    for (int tid = get_global_id(0); tid < size; tid += numThreads)
        sum += in[tid];
    part[get_local_id(0)] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        float t = 0.0f;
        for (int i = 0; i < get_local_size(0); i++)
            t += part[i];
        out[get_group_id(0)] = t + numThreads;
    }
}"""


@pytest.mark.parametrize("n", [0, 5, 1000, 4096, 5003])
def test_histogram_over_a_grid_stride_loop(n):
    k = build_kernel(HISTOGRAM, "hist", local_size=(32,))
    assert "__step" in k.c_source
    data = np.random.default_rng(n).integers(0, 256, max(n, 1), dtype=np.uint8)
    bins = np.zeros(64, np.uint32)
    run(HISTOGRAM, "hist", (128,), (32,), data, bins, np.int32(n))
    np.testing.assert_array_equal(bins, np.bincount(data[:n] & 63, minlength=64))


def test_strided_loop_with_a_uniform_start_and_an_inclusive_bound():
    k = build_kernel(FILL, "fill", local_size=(8,))
    assert "__step" in k.c_source
    out = np.full(200, -1, np.int32)
    run(FILL, "fill", (24,), (8,), out, np.int32(7), np.int32(190), offset=(2,))
    i = np.arange(200)
    # global ids run 2..25; item g writes first + g + 24 t; its group is (g - 2) // 8
    group = ((i - 7 - 2) % 24) // 8
    want = np.where((i >= 9) & (i <= 190), i * 3 + group, -1)
    np.testing.assert_array_equal(out, want)


def test_loop_updating_a_private_sum_is_left_to_each_work_item():
    k = build_kernel(SUMS, "sums", local_size=(4,))
    assert "__step" not in k.c_source
    a = np.arange(30, dtype=np.float32)
    out = np.zeros(8, np.float32)
    run(SUMS, "sums", (8,), (4,), a, out, np.int32(30))
    np.testing.assert_array_equal(out, [a[g::8].sum() for g in range(8)])


def test_bound_kept_per_work_item_across_a_barrier_is_not_uniform():
    source = """
    __kernel void k(__global int *out, __global const int *lim) {
        __local int t[8];
        int end = lim[get_local_id(0)];
        t[get_local_id(0)] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = get_local_id(0); i < end; i += 8)
            out[i] += t[0];
    }"""
    k = build_kernel(source, "k", local_size=(8,))
    assert "__step" not in k.c_source  # 'end' lives in a context array, one per work-item
    out = np.zeros(64, np.int32)
    lim = np.array([64, 8, 8, 8, 8, 8, 8, 8], np.int32)
    run(source, "k", (8,), (8,), out, lim)
    want = np.zeros(64, np.int32)
    for lx in range(8):
        want[lx:lim[lx]:8] += 1
    np.testing.assert_array_equal(out, want)


def test_const_stride_named_before_the_loop_and_read_after_a_barrier():
    # tried as a new user would: the stride kept in a const variable, read again after a
    # barrier. It was both recomputed in each region and a group scalar assigned once, so
    # the generated C assigned to the const redeclaration and gcc refused it.
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros(2, np.float32)
    run(GRID_REDUCE, "red", (64,), (32,), a, out, LocalMem(32 * 4), np.int32(1000))
    idx = np.arange(1000)
    np.testing.assert_allclose(out, [a[(idx % 64) // 32 == g].sum() + 64 for g in range(2)])


def test_bound_narrowed_by_a_cast_keeps_its_cast():
    # the lock-step loop compared with the bound's operand, not its (short) value: the
    # work-items wrote up to n instead of (short)n
    source = """
    __kernel void k(__global int *out, int n) {
        for (int i = get_global_id(0); i < (short)n; i += get_global_size(0))
            out[i] = i;
    }"""
    out = np.full(4600, -1, np.int32)
    run(source, "k", (64,), (16,), out, np.int32(70000))
    want = np.arange(4600)
    want[70000 - 65536:] = -1
    np.testing.assert_array_equal(out, want)


def test_counter_compared_unsigned_from_below_zero_is_left_to_each_work_item():
    # 'i < n' with an unsigned n compares (uint)i: a counter starting below zero is large
    # and fails the test at once, where the 64-bit lock-step counter would not
    source = """
    __kernel void k(__global int *out, uint n, int start) {
        for (int i = get_global_id(0) + start; i < n; i += get_global_size(0))
            out[i + 8] = i;
    }"""
    k = build_kernel(source, "k", local_size=(16,))
    assert "__step" not in k.c_source
    out = np.full(64, -1, np.int32)
    run(source, "k", (32,), (16,), out, np.uint32(40), np.int32(-5))
    want = np.full(64, -1, np.int32)
    for start in range(-5, 32 - 5):
        if start >= 0:  # a work-item that starts below zero stops at once
            want[8 + start:48:32] = np.arange(start, 40, 32)
    np.testing.assert_array_equal(out, want)
