"""64-bit indices in the fast copy of a split loop (``transforms/wide_index.py``): 32-bit index
arithmetic over ids and sizes vectorizes where it cannot wrap, and keeps its exact 32-bit
meaning (wraparound included) wherever it can."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kernel_sources import SOBEL
from tests.launch import aligned_empty, build_kernel, run, run_in_chunks
from tests.test_split import _formed

# a 3x3 box filter of the interior, ids and sizes kept in TYPE, indices ``x + y * w``
BOX = """
__kernel void box(__global const int *in, __global int *out)
{
    TYPE x = get_global_id(0), y = get_global_id(1);
    TYPE w = get_global_size(0), h = get_global_size(1);
    int c = x + y * w;
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) {
        out[c] = in[c - 1 - w] + in[c - w] + in[c + 1 - w] + in[c - 1] + 2 * in[c]
               + in[c + 1] + in[c - 1 + w] + in[c + w] + in[c + 1 + w];
    }
}
"""

# unsigned wraparound that lands in bounds: x - 1u wraps at x = 0, + 1u brings it back
WRAP_BACK = """
__kernel void back(__global const int *in, __global int *out, uint n)
{
    uint x = get_global_id(0);
    if (x < n)
        out[x] = in[x - 1u + 1u] + 1;
}
"""

# an index whose 32-bit arithmetic overflows on purpose: a * b wraps, or x + a * b does
OVERFLOW = """
__kernel void over(__global const int *in, __global int *out, uint n, uint a, ushort b)
{
    uint x = get_global_id(0);
    if (x >= 1 && x < n)
        out[x] = in[x + a * b];
}
"""


def _box(pixels: np.ndarray) -> np.ndarray:
    h, w = pixels.shape
    out = np.zeros_like(pixels)
    p = pixels.astype(np.int64)
    inner = sum(p[1 + dy:h - 1 + dy, 1 + dx:w - 1 + dx] for dy in (-1, 0, 1)
                for dx in (-1, 0, 1)) + p[1:-1, 1:-1]
    out[1:-1, 1:-1] = inner
    return out


@pytest.mark.parametrize("type_name", ["uint", "int"])
@pytest.mark.parametrize("shape, local", [((48, 32), (16, 16)), ((40, 24), (8, 8)),
                                          ((7, 5), (7, 5)), ((96, 3), (32, 1))])
def test_box_filter_equals_numpy(type_name: str, shape: tuple[int, int],
                                 local: tuple[int, int]) -> None:
    w, h = shape
    rng = np.random.default_rng(w * h)
    pixels = rng.integers(-1000, 1000, (h, w), dtype=np.int32)
    out = np.zeros_like(pixels)
    run(BOX.replace("TYPE", type_name), "box", (w, h), local, pixels, out)
    np.testing.assert_array_equal(out, _box(pixels))


@pytest.mark.parametrize("type_name", ["uint", "int"])
def test_box_filter_fast_copy_equals_numpy(type_name: str) -> None:
    """Every group that can runs the fast copy (the dispatcher's mask clear)."""
    w, h = 64, 48
    kernel = build_kernel(BOX.replace("TYPE", type_name), "box", local_size=(16, 16))
    rng = np.random.default_rng(7)
    pixels = aligned_empty((h, w), np.int32)
    pixels[:] = rng.integers(-1000, 1000, (h, w))
    out = aligned_empty((h, w), np.int32)
    out[:] = 0
    run_in_chunks(kernel, (w, h), [pixels, out], chunk=3)
    np.testing.assert_array_equal(out, _box(pixels))


@pytest.mark.parametrize("type_name", ["uint", "int"])
def test_sobel_work_item_loop_is_vectorized(type_name: str) -> None:
    kernel = build_kernel(SOBEL.replace("TYPE", type_name), "sobel", local_size=(16, 16),
                          want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report


@pytest.mark.parametrize("type_name", ["uint", "int"])
def test_box_work_item_loop_is_vectorized(type_name: str) -> None:
    kernel = build_kernel(BOX.replace("TYPE", type_name), "box", local_size=(16, 16),
                          want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report


def test_the_decision_and_its_launch_condition_are_in_the_plans() -> None:
    formed = _formed(SOBEL.replace("TYPE", "uint"), "sobel", (16, 16, 1))
    wide = [p for p in formed.plans if "in 64-bit arithmetic" in p]
    assert any("index gid0 + gid1*gsize0 - gsize0 - 1 (line 8)" in p for p in wide), \
        formed.plans
    conditions = [p for p in formed.plans if "launch conditions of the fast copy" in p]
    assert conditions and "-gsize0*gsize1 + 4294967296 >= 0" in conditions[0], formed.plans


@pytest.mark.parametrize("type_name", ["uint", "int"])
def test_the_int_guard_is_split(type_name: str) -> None:
    """``int w = get_global_size(0)`` is exact where every global id fits in int, so the
    guard ``x < w - 1`` is decided on a subdomain as its ``uint`` spelling is."""
    formed = _formed(SOBEL.replace("TYPE", type_name), "sobel", (16, 16, 1))
    split = [p for p in formed.plans if "split along x" in p]
    assert split and "gid0 <= gsize0 - 2" in split[0] and "(4 sites: guards)" in split[0], \
        formed.plans


@pytest.mark.parametrize("n", [64, 101, 192])
def test_unsigned_wraparound_that_lands_in_bounds_reads_the_same_element(n: int) -> None:
    kernel = build_kernel(WRAP_BACK, "back", local_size=(64,))
    size = (n + 63) // 64 * 64
    data = aligned_empty(size, np.int32)
    data[:] = np.arange(size, dtype=np.int32) * 3
    out = aligned_empty(size, np.int32)
    out[:] = -1
    run_in_chunks(kernel, (size,), [data, out, np.uint32(n)], chunk=1)
    want = np.full(size, -1, np.int32)
    want[:n] = data[:n] + 1
    np.testing.assert_array_equal(out, want)


# (a, b): a * b wraps to 0; small; zero; a * b = 2^32 - 1, so x + a * b wraps to x - 1
@pytest.mark.parametrize("a, b", [(1 << 20, 1 << 12), (2, 3), (0, 7), (65537, 65535)])
def test_an_overflowing_index_keeps_its_32_bit_value(a: int, b: int) -> None:
    kernel = build_kernel(OVERFLOW, "over", local_size=(64,))
    size, n = 128, 120
    data = aligned_empty(size + 8, np.int32)
    data[:] = np.arange(size + 8, dtype=np.int32) * 5 - 7
    out = aligned_empty(size, np.int32)
    out[:] = 0
    run_in_chunks(kernel, (size,), [data, out, np.uint32(n), np.uint32(a), np.uint16(b)],
                  chunk=1)
    x = np.arange(1, n)
    want = np.zeros(size, np.int32)
    want[1:n] = data[(x + a * b) % (1 << 32)]
    np.testing.assert_array_equal(out, want)


def test_an_overflowing_product_is_a_launch_condition() -> None:
    formed = _formed(OVERFLOW, "over", (64, 1, 1))
    conditions = [p for p in formed.plans if "launch conditions of the fast copy" in p]
    assert conditions and "-a*b - n + 4294967296 >= 0" in conditions[0], formed.plans
