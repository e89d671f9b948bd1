"""A loop interchanged with the work-item loop reads its counter in the indices of the work-item
loop inside it (``in[y * w + x + i]``): the wide copy of that work-item loop (64-bit indices,
``transforms/wide_index.py``) reads the counter as a counter of known range when the group-level
loop counts from a constant to a constant (``split.group_counter_ranges``); a loop bounded by
an argument keeps its work-item loop as formed. Plans and results against the build without
input space splitting."""

from __future__ import annotations

import numpy as np
import pytest
from launch import plan_text, run

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.pipeline import KernelSpec, Pipeline, kernel_ir
from ppcl.compiler.transforms.split import _loop_ranges, group_counter_ranges

SOURCE = """
__kernel void rows(__global const float *in, __constant float *w, __global float *out,
                   int width)
{
    int x = get_global_id(0) + 4, y = get_global_id(1);
    float s = 0.0f;
    for (int i = -4; i <= 4; i++)
        s += w[i + 4] * in[y * width + x + i];
    out[y * width + x] = s;
}

/* the counter read after its loop, one past its range there */
__kernel void after(__global const float *in, __global float *out, int width)
{
    int x = get_global_id(0) + 4, y = get_global_id(1);
    float s = 0.0f;
    int i;
    for (i = 0; i < 4; i++)
        s += in[y * width + x + i];
    out[y * width + x + i - 4] = s;   /* column x: i is 4 here */
}

__kernel void taps(__global const float *in, __constant float *w, __global float *out,
                   uint width, int n)
{
    uint x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int i = 0; i < n; i++)     /* a bound known at the launch only */
        s += w[i] * in[y * width + x + i];
    out[y * width + x] = s;
}
"""


def _plans(name: str) -> list[str]:
    return [line for line in plan_text(SOURCE, name).splitlines() if "work-item loop 2" in line]


def test_the_range_of_an_interchanged_counter_is_read_from_its_group_level_loop() -> None:
    module = compile_source(SOURCE).module
    value = kernel_ir(module, "rows", KernelSpec((16, 1, 1)), parse_build_options(""),
                      pipeline=Pipeline.parse("inline,switch,normalize,workgroup"))
    assert value.formed is not None
    assert group_counter_ranges(value.formed.body) == {"i": (-4, 4)}
    # a loop written elsewhere, or bounded by an argument, has none
    assert group_counter_ranges(ir.Block(())) == {}


def test_a_counter_has_its_range_only_inside_its_loop() -> None:
    """After ``for (i = 0; i < 4; i++)`` the counter is 4, outside [0, 3]: the work-item loop
    storing at ``x + i - 4`` after it must not read the range."""
    module = compile_source(SOURCE).module
    value = kernel_ir(module, "after", KernelSpec((16, 1, 1)), parse_build_options(""),
                      pipeline=Pipeline.parse("inline,switch,normalize,workgroup"))
    assert value.formed is not None
    loops = [n for n in walk(value.formed.body) if isinstance(n, wg.WorkItemLoop)]
    ranged = _loop_ranges(value.formed.body)
    inside = [loop for loop in loops if id(loop) in ranged]
    assert inside and all(ranged[id(loop)] == {"i": (0, 3)} for loop in inside)
    assert len(inside) < len(loops)  # the store after the loop has none


def test_the_wide_copy_of_the_tap_loop_needs_no_test_of_its_counter() -> None:
    lines = _plans("rows")
    wide = [line for line in lines if "wide copy: index" in line]
    assert wide and "i >= 0" not in wide[0] and "+ i +" in wide[0], lines
    # bounded by an argument: no range, and the tap loop stays as formed
    assert not [line for line in _plans("taps") if "wide copy: index" in line]


@pytest.mark.parametrize("width, height", [(24, 3), (61, 5), (300, 4)])
def test_results_equal_the_build_without_splitting_and_numpy(width: int, height: int) -> None:
    rng = np.random.default_rng(width)
    src = rng.standard_normal(width * height).astype(np.float32)
    w = rng.standard_normal(9).astype(np.float32)
    inner = width - 8
    for name, scalars in (("rows", (np.int32(width),)),
                          ("taps", (np.uint32(width), np.int32(9)))):
        got, plain = np.zeros_like(src), np.zeros_like(src)
        size = (inner, height)
        run(SOURCE, name, size, None, src, w, got, *scalars)
        run(SOURCE, name, size, None, src, w, plain, *scalars, options="-ppcl-no-split")
        np.testing.assert_array_equal(got, plain)
    got, plain = np.zeros_like(src), np.zeros_like(src)
    run(SOURCE, "after", (inner, height), None, src, got, np.int32(width))
    run(SOURCE, "after", (inner, height), None, src, plain, np.int32(width),
        options="-ppcl-no-split")
    np.testing.assert_array_equal(got, plain)
    image = src.reshape(height, width).astype(np.float64)
    sums = sum(image[:, 4 + k:4 + k + inner] for k in range(4))
    np.testing.assert_allclose(got.reshape(height, width)[:, 4:4 + inner], sums, rtol=1e-5,
                               atol=1e-5)
    want = sum(w[k] * image[:, k:k + inner] for k in range(9))
    rows = np.zeros_like(src)
    run(SOURCE, "rows", (inner, height), None, src, w, rows, np.int32(width))
    np.testing.assert_allclose(rows.reshape(height, width)[:, 4:4 + inner], want, rtol=1e-5,
                               atol=1e-5)


TILED = """
/* a tile's rows in steps of the group's height, the group id of one dimension beside the
   local id of the other (a transpose's output side) */
__kernel void swap_tiles(__global const float *in, __global float *out, int w, int h)
{
    int col = get_group_id(1) * 16 + get_local_id(0);
    int row = get_group_id(0) * 16 + get_local_id(1);
    for (int i = 0; i < 16; i += 4)
        out[(row + i) * w + col] = 2.0f * in[(row + i) * w + col];
}
"""


def test_a_counter_stepped_by_a_constant_has_its_range() -> None:
    module = compile_source(TILED).module
    value = kernel_ir(module, "swap_tiles", KernelSpec((16, 4, 1)), parse_build_options(""),
                      pipeline=Pipeline.parse("inline,switch,normalize,workgroup"))
    assert value.formed is not None
    assert group_counter_ranges(value.formed.body) == {"i": (0, 15)}


def test_indices_mixing_the_dimensions_of_group_and_local_ids_get_a_wide_copy() -> None:
    text = plan_text(TILED, "swap_tiles", (16, 4, 1))
    assert "versioned: the wide copy where" in text, text
    # a group id is bounded by its base over the local size: no test of it alone
    wide = [line for line in text.splitlines() if "wide copy: index" in line]
    assert wide and "group0" in wide[0], text


@pytest.mark.parametrize("w, h", [(32, 16), (48, 80), (16, 16)])
def test_tiles_swapped_with_mixed_indices_equal_numpy(w: int, h: int) -> None:
    # h rows of w: group (gx, gy) doubles rows gx*16.. at columns gy*16..
    rng = np.random.default_rng(w + h)
    src = rng.standard_normal(w * h).astype(np.float32)
    got = np.zeros_like(src)
    run(TILED, "swap_tiles", (h, w // 4), (16, 4), src, got, np.int32(w), np.int32(h))
    plain = np.zeros_like(src)
    run(TILED, "swap_tiles", (h, w // 4), (16, 4), src, plain, np.int32(w), np.int32(h),
        options="-ppcl-no-split")
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got, 2.0 * src)
