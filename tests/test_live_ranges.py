"""Reassigned variables split into one variable per value (``transforms/live_ranges.py``):
which assignments cut, which variables are left as they are, and kernels that reuse their
index variables after a barrier giving numpy's results at awkward sizes."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.transforms.live_ranges import split_live_ranges
from tests.launch import plan_text

mf = cl.mem_flags


def _split(source: str) -> tuple[ir.Function, tuple[str, ...]]:
    kernel = compile_source(source).module.kernels[0]
    return split_live_ranges(kernel)


def _declared(kernel: ir.Function) -> list[str]:
    return [d.name for n in walk(kernel) if isinstance(n, ir.DeclStmt) for d in n.decls]


def test_a_top_level_reassignment_starts_a_new_variable() -> None:
    kernel, notes = _split("""
    __kernel void k(__global int *o, int w) {
        int i = get_global_id(0);
        o[i] = 1;
        i = get_global_id(0) + w;
        o[i] += 2;
        for (int t = 0; t < 2; t++)
            o[i + t] += t;
        i = 3 * w;
        o[i] = 0;
    }""")
    assert _declared(kernel).count("i__2") == 1 and _declared(kernel).count("i__3") == 1
    assert not any(isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef)
                   for n in walk(kernel))
    assert notes == ("'i' reassigned at lines 5, 9: a new variable from each, one value each",)


@pytest.mark.parametrize("body", [
    "int i = 1; if (w > 0) i = w; o[i] = 0;",           # under a branch
    "int i = 1; for (int t = 0; t < w; t++) i = t; o[i] = 0;",  # in a loop
    "int i = w; i = i * 2; o[i] = 0;",                  # reads its own value
    "int i = w; int *p = &i; i = 3; o[*p] = 0;",        # address taken
])
def test_assignments_that_do_not_end_a_value_are_left(body: str) -> None:
    kernel, notes = _split(f"__kernel void k(__global int *o, int w) {{ {body} }}")
    assert notes == ()
    assert "i__2" not in _declared(kernel)


TILES = """
#define T 16
__kernel void flip(__global const float *src, __global float *dst, int w, int h)
{
    __local float tile[T][T + 1];
    int col = get_group_id(0) * T + get_local_id(0);
    int row = get_group_id(1) * T + get_local_id(1);
    if (col < w && row < h)
        tile[get_local_id(1)][get_local_id(0)] = src[row * w + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    col = get_group_id(1) * T + get_local_id(0);
    row = get_group_id(0) * T + get_local_id(1);
    if (col < h && row < w)
        dst[row * h + col] = tile[get_local_id(0)][get_local_id(1)];
}

__kernel void twice(__global float *a, int n, float s)
{
    size_t i = get_global_id(0);
    float v = a[i] * s;
    a[i] = v;
    barrier(CLK_GLOBAL_MEM_FENCE);
    v = 0.0f;
    for (int k = 0; k < 3; k++)
        v += a[(i + k) % n];
    barrier(CLK_GLOBAL_MEM_FENCE);
    a[i] = v;
}
"""


def test_the_plans_say_which_variables_were_split() -> None:
    text = plan_text(TILES, "flip", (16, 16, 1))
    assert "'col' reassigned at line 11: a new variable from each" in text
    assert "'row' reassigned at line 12: a new variable from each" in text


@pytest.mark.parametrize("w, h", [(64, 32), (37, 50), (16, 16)])
def test_a_tiled_transpose_reusing_its_indices_matches_numpy(w: int, h: int) -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, TILES).build()
    src = np.random.default_rng(w + h).random((h, w), dtype=np.float32)
    dst = np.zeros((w, h), np.float32)
    src_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    dst_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=dst)
    side = max(w, h)
    grid = -(-side // 16) * 16
    prg.flip(queue, (grid, grid), (16, 16), src_buf, dst_buf, np.int32(w), np.int32(h))
    cl.enqueue_copy(queue, dst, dst_buf)
    np.testing.assert_array_equal(dst, src.T)


def test_a_value_reset_between_barriers_matches_numpy() -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, TILES).build()
    n = 64  # one group: the barriers order the whole array
    a = np.random.default_rng(5).random(n, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
    prg.twice(queue, (n,), (n,), buf, np.int32(n), np.float32(2))
    got = np.empty_like(a)
    cl.enqueue_copy(queue, got, buf)
    scaled = a * np.float32(2)
    want = sum(np.roll(scaled, -k) for k in range(3))
    np.testing.assert_allclose(got, want, rtol=1e-6)
