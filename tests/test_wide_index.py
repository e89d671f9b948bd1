"""64-bit indices in the fast copy of a split loop and in the wide copy of a loop not split
(``transforms/wide_index.py``): 32-bit index arithmetic over ids and sizes vectorizes where it
cannot wrap, and keeps its exact 32-bit meaning (wraparound included) wherever it can."""

from __future__ import annotations

import numpy as np
import pytest

from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from tests.kernel_sources import SOBEL
from tests.launch import LocalMem, aligned_empty, build_kernel, run, run_in_chunks
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


# ---------------------------------------------------------------- the wide copy of a loop
# not split: the same 2D indexing in four shapes of unsigned arithmetic, no guard in any

# ``uint`` ids and a ``uint`` width argument
ROW_MAJOR = """
__kernel void scale(__global const float *in, __global float *out, uint width)
{
    uint x = get_global_id(0);
    uint y = get_global_id(1);
    out[y * width + x] = 2.0f * in[y * width + x] + (float)x;
}
"""

# a ``size_t`` position converted to ``unsigned int``
FLAT = """
__kernel void scale(__global const float *in, __global float *out, uint width)
{
    unsigned int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    out[i] = 2.0f * in[i] + (float)(i - get_global_id(1) * width);
}
"""

# the position from the group and local ids, the row index times a stride
GROUP_POSITION = """
__kernel void scale(__global const float *in, __global float *out, uint width)
{
    uint gx = get_group_id(0) * get_local_size(0) + get_local_id(0);
    uint row = get_global_id(1) * width;
    out[row + gx] = 2.0f * in[gx + row] + (float)gx;
}
"""

# const ids and one index variable, stored from the branches of an if
BRANCHES = """
__kernel void scale(__global const float *in, __global float *out, const unsigned int width)
{
    const unsigned int x = get_global_id(0);
    const unsigned int y = get_global_id(1);
    const unsigned int id = y * width + x;
    if (in[id] > 0.0f)
        out[id] = 2.0f * in[id] + (float)x;
    else
        out[id] = 2.0f * in[id] + (float)x;
}
"""

# ``uint`` ids times a signed ``int`` width: unsigned arithmetic, ``width >= 0`` a condition
INT_WIDTH = """
__kernel void scale(__global const float *in, __global float *out, int width)
{
    unsigned int x = get_global_id(0), y = get_global_id(1);
    out[x + width * y] = 2.0f * in[x + width * y] + (float)x;
}
"""

# a ``size_t`` position converted to ``int`` (``int i = get_global_id(1) * w + ...``): the
# conversion keeps the sum modulo 2^32, which gcc cannot follow along the loop either
SIZE_T_TO_INT = """
__kernel void scale(__global const float *in, __global float *out, int width)
{
    int i = get_global_id(1) * width + get_global_id(0);
    out[i] = 2.0f * in[i] + (float)(int)get_global_id(0);
}
"""

SHAPES = {"row_major": ROW_MAJOR, "flat": FLAT, "group_position": GROUP_POSITION,
          "branches": BRANCHES, "int_width": INT_WIDTH, "size_t_to_int": SIZE_T_TO_INT}
SIGNED_WIDTH = frozenset(("int_width", "size_t_to_int"))


def _scaled(pixels: np.ndarray) -> np.ndarray:
    h, w = pixels.shape
    return (2.0 * pixels + np.arange(w, dtype=np.float32)[None, :]).astype(np.float32)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("size, local", [((48, 20), (16, 4)), ((21, 9), (7, 3)),
                                         ((40, 3), (8, 1)), ((5, 7), (5, 7))])
def test_unsigned_row_major_indices_equal_numpy(shape: str, size: tuple[int, int],
                                                local: tuple[int, int]) -> None:
    w, h = size
    rng = np.random.default_rng(w * 31 + h)
    pixels = rng.standard_normal((h, w)).astype(np.float32)
    out = np.zeros_like(pixels)
    width = np.int32(w) if shape in SIGNED_WIDTH else np.uint32(w)
    run(SHAPES[shape], "scale", (w, h), local, pixels, out, width)
    np.testing.assert_array_equal(out, _scaled(pixels))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_gets_a_wide_copy_under_its_launch_condition(shape: str) -> None:
    """The loop is not split (no guard), so its indices are widened with the tile's bounds:
    ``y * width + x`` needs a test of the group's base and ``width`` (or the global size),
    a split with no bounds along x, recorded in the IR and in the plans."""
    formed = _formed(SHAPES[shape], "scale", (16, 4, 1))
    (versioned,) = find_all(formed.body, wg.SplitLoop)
    assert not versioned.lower and not versioned.upper and versioned.score is None
    assert any("versioned: the wide copy where" in p for p in formed.plans), formed.plans
    wide = [p for p in formed.plans if "wide copy: index" in p and "64-bit" in p]
    assert wide, formed.plans


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_vectorizes(shape: str) -> None:
    kernel = build_kernel(SHAPES[shape], "scale", local_size=(16, 4), want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report


def test_the_row_major_launch_condition_is_a_ceiling_on_the_groups_base() -> None:
    """Groups of 16x4 run as rows: along x the lanes span the launch, along y the group."""
    formed = _formed(ROW_MAJOR, "scale", (16, 4, 1))
    conditions = [p for p in formed.plans if "launch conditions of the wide copy" in p]
    assert conditions and "-base1*width - gsize0 - offset0 - 3*width + 4294967296 >= 0" \
        in conditions[0], formed.plans


def test_a_signed_width_in_unsigned_arithmetic_is_tested_for_its_sign() -> None:
    formed = _formed(INT_WIDTH, "scale", (16, 4, 1))
    conditions = [p for p in formed.plans if "launch conditions of the wide copy" in p]
    assert conditions and "width >= 0 and" in conditions[0], formed.plans


def test_a_local_position_is_widened_on_every_launch() -> None:
    """``(lid1 + 1) * (L0 + 2) + lid0 + 1`` is bounded by constants: no test, no copy."""
    source = """
    __kernel void halo(__global const float *in, __global float *out, __local float *tile)
    {
        uint i = (get_local_id(1) + 1) * (get_local_size(0) + 2) + get_local_id(0) + 1;
        size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
        tile[i] = in[g];
        barrier(CLK_LOCAL_MEM_FENCE);
        out[g] = tile[i] * 2.0f;
    }
    """
    formed = _formed(source, "halo", (8, 4, 1))
    wide = [p for p in formed.plans if "-base0 - 10*base1 + gid0 + 10*gid1 + 11" in p]
    assert wide and all("where" not in p for p in wide), formed.plans
    assert any("its indices in 64-bit arithmetic on every launch" in p for p in formed.plans)
    pixels = np.arange(24 * 12, dtype=np.float32).reshape(12, 24)
    out = np.zeros_like(pixels)
    run(source, "halo", (24, 12), (8, 4), pixels, out, LocalMem(4 * 10 * 6))
    np.testing.assert_array_equal(out, pixels * 2)


# a real wraparound: ``x + b + y * s`` with ``s = 2^32 - w`` is ``x + b - y * w`` modulo 2^32,
# in bounds for ``b = w * (h - 1)``: row ``y`` reads row ``h - 1 - y``
FLIP = """
__kernel void flip(__global const int *in, __global int *out, uint w, uint b, uint s)
{
    uint x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = in[x + b + y * s];
}
"""


@pytest.mark.parametrize("size, local", [((24, 6), (8, 1)), ((24, 6), (8, 2)),
                                         ((13, 5), (13, 1)), ((7, 9), (1, 3))])
def test_an_index_that_wraps_keeps_its_32_bit_value(size: tuple[int, int],
                                                    local: tuple[int, int]) -> None:
    """Groups of the first row pass the launch test (``b + x`` fits) and run the wide copy;
    every other group's index wraps, fails it, and runs the loop as formed."""
    w, h = size
    pixels = np.arange(w * h, dtype=np.int32).reshape(h, w) * 7 - 3
    out = np.zeros_like(pixels)
    run(FLIP, "flip", (w, h), local, pixels, out, np.uint32(w), np.uint32(w * (h - 1)),
        np.uint32((1 << 32) - w))
    np.testing.assert_array_equal(out, pixels[::-1])
    formed = _formed(FLIP, "flip", (*local, 1))
    assert any("versioned: the wide copy where" in p for p in formed.plans), formed.plans


# ``x - 1`` at ``x == 0`` wraps to 2^32 - 1 before the modulo, which OpenCL defines
MODULO_NEIGHBOURS = """
__kernel void ring(__global const char *in, __global char *out, const unsigned int n)
{
    const unsigned int x = get_global_id(0);
    const unsigned int y = get_global_id(1);
    const unsigned int id = y * n + x;
    const unsigned int l = (x - 1) % n;
    const unsigned int r = (x + 1) % n;
    int count = 0;
    if (in[y * n + l] == 1) count++;
    if (in[y * n + r] == 1) count++;
    if (in[id] == 1) {
        if (count == 1) out[id] = 1; else out[id] = 0;
    } else {
        if (count >= 1) out[id] = 1; else out[id] = 0;
    }
}
"""


@pytest.mark.parametrize("size, local", [((7, 4), (7, 2)), ((16, 6), (8, 3)),
                                         ((24, 5), (12, 1))])
def test_a_wrapped_neighbour_under_a_modulo_keeps_its_value(size: tuple[int, int],
                                                            local: tuple[int, int]) -> None:
    w, h = size
    rng = np.random.default_rng(w + h)
    cells = (rng.random((h, w)) < 0.4).astype(np.int8)
    out = np.full_like(cells, 5)
    run(MODULO_NEIGHBOURS, "ring", (w, h), local, cells, out, np.uint32(w))
    x = np.arange(w, dtype=np.uint32)
    left = (x - np.uint32(1)) % np.uint32(w)  # at x = 0: (2^32 - 1) % w, not w - 1
    count = (cells[:, left] == 1).astype(int) + (cells[:, (x + 1) % w] == 1)
    want = np.where(cells == 1, count == 1, count >= 1).astype(np.int8)
    np.testing.assert_array_equal(out, want)
    unwidened = np.full_like(cells, 5)
    run(MODULO_NEIGHBOURS, "ring", (w, h), local, cells, unwidened, np.uint32(w),
        options="-ppcl-no-split")
    np.testing.assert_array_equal(out, unwidened)


UINT_ID = """
__kernel void twice(__global const float *in, __global float *out)
{
    uint i = get_global_id(0);
    out[i] = 2.0f * in[i];
}
"""


@pytest.mark.parametrize("n, local", [(64, 64), (96, 32), (35, 7), (1, 1)])
def test_a_uint_id_is_read_in_long_and_vectorizes(n: int, local: int) -> None:
    """``uint i = get_global_id(0)`` is ``(uint)__gb0 + (uint)__lx`` in C, a sum gcc must let
    wrap: the loop stayed scalar. Ids fit in ``int`` (a narrow launch), so the index is read
    in ``long`` on every launch, with no test and no second copy."""
    kernel = build_kernel(UINT_ID, "twice", local_size=(local,), want_vector_report=True)
    if local > 1:
        assert "loop vectorized" in kernel.vector_report, kernel.vector_report
    formed = _formed(UINT_ID, "twice", (local, 1, 1))
    assert not find_all(formed.body, wg.SplitLoop), formed.plans
    assert any("wide copy: index gid0" in p for p in formed.plans), formed.plans
    values = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.zeros_like(values)
    run(UINT_ID, "twice", (n,), (local,), values, out)
    np.testing.assert_array_equal(out, 2.0 * values)


@pytest.mark.parametrize("width", [-3, 1 << 29])
def test_a_truncated_size_t_position_out_of_int_keeps_its_value(width: int) -> None:
    """``int i = get_global_id(1) * width + get_global_id(0)`` where the size_t sum leaves
    ``int`` (a negative width, or rows of 2^29): the groups where it could run the loop as
    formed, so each work-item stores at the truncated position, as without the copy."""
    source = """
    __kernel void mark(__global int *out, int width, int n)
    {
        int i = get_global_id(1) * width + get_global_id(0);
        int slot = i & 63;
        if (slot < 0) slot = -slot;
        atomic_max(&out[slot], (int)(get_global_id(1) * 16 + get_global_id(0)));
        out[64 + get_global_id(1) * 16 + get_global_id(0)] = i;
    }
    """
    size, local = (16, 6), (8, 2)
    expected = np.zeros(64 + 96, np.int32)
    unwidened = expected.copy()
    run(source, "mark", size, local, expected, np.int32(width), np.int32(0))
    run(source, "mark", size, local, unwidened, np.int32(width), np.int32(0),
        options="-ppcl-no-split")
    np.testing.assert_array_equal(expected, unwidened)
    y, x = np.mgrid[0:6, 0:16]
    truncated = ((y.astype(np.int64) * width + x) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(expected[64:], truncated.ravel())


def test_signed_indices_get_no_wide_copy() -> None:
    """``int`` arithmetic does not wrap in a defined kernel: its loop is left as formed
    (``widen.py`` declares such variables 64 bits wide), with no copy and no test."""
    source = """
    __kernel void scale(__global const float *in, __global float *out, int width)
    {
        int x = get_global_id(0), y = get_global_id(1);
        out[y * width + x] = 2.0f * in[8 * x + y];
    }
    """
    formed = _formed(source, "scale", (16, 4, 1))
    assert not find_all(formed.body, wg.SplitLoop)
    assert not [p for p in formed.plans if "wide copy" in p or "every launch" in p], formed.plans
