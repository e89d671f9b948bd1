"""Conversions between half and float on the CPU device (``vstore_half*``, ``vload_half*``):
written without branches so that the loops around them vectorize, and still exact: every
sampled float stored as a half in each rounding mode is the half the mode picks, and every
half loads as its float."""

from __future__ import annotations

import numpy as np
import pytest
from launch import build_kernel, run
from test_workgroup import _work_item_loops_vectorized

STORE = """
__kernel void store(__global const float *x, __global half *h)
{
    size_t i = get_global_id(0);
    vstore_half%s(x[i], i, h);
}
"""

LOAD = """
__kernel void load(__global const half *h, __global float *x)
{
    size_t i = get_global_id(0);
    x[i] = vload_half(i, h);
}
"""

def _sampled_floats() -> np.ndarray:
    """Every 251st float bit pattern (all binades, both signs, NaNs), every float around the
    half range's edges (denormals, the largest half, the overflow threshold)."""
    bits = np.arange(0, 1 << 32, 251, dtype=np.uint64).astype(np.uint32)
    edges = [np.arange(v - 4096, v + 4096, dtype=np.uint32) for v in
             (0x33000000, 0x38800000, 0x477fe000, 0x477ff000, 0x387fc000)]
    bits = np.concatenate([bits, *edges, *(e | np.uint32(0x80000000) for e in edges)])
    return bits[: len(bits) // 256 * 256].view(np.float32)


def _expected(x: np.ndarray, mode: str) -> np.ndarray:
    """The half bit patterns of ``x`` rounded by ``mode``, from numpy's round-to-nearest-even
    conversion and the neighbouring half; NaNs quiet with their payload's top bits."""
    with np.errstate(all="ignore"):
        nearest = x.astype(np.float16)
        exact = nearest.astype(np.float64) == x.astype(np.float64)
        above = nearest.astype(np.float64) > x.astype(np.float64)
        hi = np.where(above, nearest, np.nextafter(nearest, np.float16(np.inf)))
        lo = np.where(above, np.nextafter(nearest, np.float16(-np.inf)), nearest)
    chosen = {"": nearest, "_rte": nearest, "_rtp": hi, "_rtn": lo,
              "_rtz": np.where(x > 0, lo, hi)}[mode]
    result = np.where(exact, nearest, chosen).view(np.uint16)
    bits = x.view(np.uint32)
    nan = ((bits >> 16) & 0x8000) | 0x7E00 | ((bits >> 13) & 0x3FF)
    return np.where(np.isnan(x), nan.astype(np.uint16), result)


@pytest.mark.parametrize("mode", ["", "_rte", "_rtz", "_rtp", "_rtn"])
def test_floats_stored_as_halves_round_by_the_mode(mode: str) -> None:
    x = _sampled_floats()
    h = np.zeros(len(x), np.uint16)
    run(STORE % mode, "store", (len(x),), (256,), x, h)
    want = _expected(x, mode)
    wrong = np.flatnonzero(h != want)
    assert len(wrong) == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(h[i])), hex(int(want[i])))
                             for i in wrong[:5]]


def test_every_half_loads_as_its_float() -> None:
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = np.zeros(len(h), np.float32)
    run(LOAD, "load", (len(h),), (256,), h, x)
    want = h.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(x.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("source, name", [(STORE % "", "store"), (STORE % "_rtz", "store"),
                                          (LOAD, "load")])
def test_loops_converting_halves_vectorize(source: str, name: str) -> None:
    kernel = build_kernel(source, name, local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(kernel), kernel.vector_report


VECTOR_FORMS = """
__kernel void halves(__global const float *x, __global half *h, __global half *t,
                     __global float *y)
{
    size_t i = get_global_id(0);
    vstore_half4(vload4(i, x) * 2.0f, i, h);
    vstore_half4_rtz(vload4(i, x) * 3.0f, i, t);
    vstore4(vload_half4(i, h) + 1.0f, i, y);
}
__kernel void triples(__global const float *p, __global const float *q, __global float *r)
{
    size_t i = get_global_id(0);
    float3 a = vload3(i, p), b = vload3(i, q);
    vstore3(cross(a, b) + a * 2.0f, i, r);
}
"""


@pytest.mark.parametrize("name", ["halves", "triples"])
def test_vector_loads_and_stores_are_split_and_vectorized(name: str) -> None:
    """vloadN, vstoreN, vload_halfN, vstore_halfN and cross moved their lanes one at a time,
    so a work-item loop around them ran one work-item at a time (vload3/cross/vstore3 7x
    slower than pocl): the region is split into scalar loads and stores and vectorizes, with
    the same values."""
    kernel = build_kernel(VECTOR_FORMS, name, local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(kernel), kernel.vector_report
    rng = np.random.default_rng(5)
    n = 128
    if name == "halves":
        x = rng.uniform(-100, 100, 4 * n).astype(np.float32)
        h, t = np.zeros(4 * n, np.uint16), np.zeros(4 * n, np.uint16)
        y = np.zeros(4 * n, np.float32)
        run(VECTOR_FORMS, "halves", (n,), (64,), x, h, t, y)
        np.testing.assert_array_equal(h, _expected(x * np.float32(2), "_rte"))
        np.testing.assert_array_equal(t, _expected(x * np.float32(3), "_rtz"))
        want = h.view(np.float16).astype(np.float32) + np.float32(1)
        np.testing.assert_array_equal(y, want)
    else:
        p = rng.uniform(-2, 2, 3 * n).astype(np.float32)
        q = rng.uniform(-2, 2, 3 * n).astype(np.float32)
        r = np.zeros(3 * n, np.float32)
        run(VECTOR_FORMS, "triples", (n,), (64,), p, q, r)
        a, b = p.reshape(n, 3), q.reshape(n, 3)
        want = np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                         a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                         a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1) + a * np.float32(2)
        np.testing.assert_array_equal(r, want.astype(np.float32).ravel())
