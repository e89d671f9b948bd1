"""A private pointer into a buffer at an offset per work-item (``p = in + lid * chunk``) is
part of every access through it (``workgroup.pointer_offsets``): a loop reading ``p[i]``
strides by ``chunk`` across work-items, as ``in[lid * chunk + i]`` does, and is not moved out
of the work-item loop for a broadcast it is not. Three spellings get the same plan, and the
results equal numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from tests.launch import plan_text

mf = cl.mem_flags

SOURCE = """
__kernel void by_pointer(__global const int *in, __global int *out, int chunk)
{
    int w = get_global_id(0);
    __global const int *row = in + w * chunk;
    int s = 0;
    for (int i = 0; i < chunk; i++)
        s += row[i] * (i + 1);
    out[w] = s;
}

__kernel void by_address(__global const int *in, __global int *out, int chunk)
{
    int w = get_global_id(0);
    __global const int *row = &in[w * chunk];
    int s = 0;
    for (int i = 0; i < chunk; i++)
        s += row[i] * (i + 1);
    out[w] = s;
}

__kernel void by_index(__global const int *in, __global int *out, int chunk)
{
    int w = get_global_id(0);
    int s = 0;
    for (int i = 0; i < chunk; i++)
        s += in[w * chunk + i] * (i + 1);
    out[w] = s;
}

/* the same pointer for every work-item: a broadcast, moved out as before */
__kernel void shared_row(__global const int *in, __global int *out, int chunk, int k)
{
    int w = get_global_id(0);
    __global const int *row = in + k * chunk;
    int s = 0;
    for (int i = 0; i < chunk; i++)
        s += row[i] * in[i * get_global_size(0) + w];
    out[w] = s;
}
"""

SHAPES = ["by_pointer", "by_address", "by_index"]


def _loop_plan(name: str) -> str:
    lines = [line for line in plan_text(SOURCE, name, (64, 1, 1)).splitlines()
             if "for loop at" in line and "unrolled" not in line]
    assert len(lines) == 1, lines
    return lines[0].split(": ", 2)[2]


def test_a_pointer_offset_per_work_item_keeps_the_loop_per_work_item() -> None:
    plans = {name: _loop_plan(name) for name in SHAPES}
    assert len(set(plans.values())) == 1, plans
    assert "no interchange" in plans["by_pointer"], plans


def test_a_pointer_the_same_for_every_work_item_is_a_broadcast() -> None:
    assert _loop_plan("shared_row") == "interchange"


@pytest.mark.parametrize("n, chunk, local", [(64, 16, (64,)), (100, 7, None), (32, 1, (8,))])
def test_rows_through_pointers_match_numpy(n: int, chunk: int,
                                           local: tuple[int] | None) -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    data = np.random.default_rng(n + chunk).integers(-50, 50, n * chunk, dtype=np.int32)
    buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    out = np.zeros(n, np.int32)
    out_buf = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    weights = np.arange(1, chunk + 1, dtype=np.int64)
    want = (data.reshape(n, chunk).astype(np.int64) * weights).sum(1)
    for name in SHAPES:
        getattr(prg, name)(queue, (n,), local, buf, out_buf, np.int32(chunk))
        cl.enqueue_copy(queue, out, out_buf)
        np.testing.assert_array_equal(out, want, err_msg=name)
    k = min(3, n // chunk) if chunk <= n else 0
    table = data.reshape(chunk, n).astype(np.int64) if n * chunk == data.size else None
    assert table is not None
    prg.shared_row(queue, (n,), local, buf, out_buf, np.int32(chunk), np.int32(k))
    cl.enqueue_copy(queue, out, out_buf)
    row = data[k * chunk:(k + 1) * chunk].astype(np.int64)
    np.testing.assert_array_equal(out, (row[:, None] * table).sum(0))


RECORDS = """
__constant float W[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
__kernel void by_record(__global const float *src, __global float *out)
{
    int cell = get_global_id(0);
    __global const float *rec = src + cell * 9;
    float s = 0.0f;
    for (int q = 0; q < 9; q++)
        s += W[q] * rec[q];
    out[cell] = s;
}
__kernel void by_index(__global const float *src, __global float *out)
{
    int cell = get_global_id(0);
    float s = 0.0f;
    for (int q = 0; q < 9; q++)
        s += W[q] * src[cell * 9 + q];
    out[cell] = s;
}
"""


def test_the_unroll_sees_a_record_through_a_pointer_as_through_an_index() -> None:
    # the unroll's strided test reads accesses through element_address as formation does
    for name, buffer in (("by_record", "rec"), ("by_index", "src")):
        text = plan_text(RECORDS, name, (64, 1, 1))
        assert f"not unrolled: {buffer} is strided across work-items" in text, text
