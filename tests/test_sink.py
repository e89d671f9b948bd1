"""Uniform stores sunk (``transforms/sink.py``): a store of one value to one address under the
lanes' conditions runs once after the work-item loop where the group's other accesses miss it,
and as formed where they may not (the same buffer passed twice)."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.devices.cpu import CPUDevice
from ppcl.runtime.platform import Device as RuntimeDevice
from tests.launch import run

UPDATE = """
__kernel void update(__global uchar *mask, __global uchar *updating, __global uchar *visited,
                     __global int *over, int n)
{
    int tid = get_global_id(0);
    if (tid >= n)
        return;
    if (updating[tid]) {
        mask[tid] = 1;
        visited[tid] = 1;
        *over = 1;
        updating[tid] = 0;
    }
}
"""

ALIASED = """
__kernel void aliased(__global uchar *flag, __global int *over, __global int *out)
{
    int tid = get_global_id(0);
    if (flag[4 * tid]) {
        out[tid] = 1;
        *over = 7;
        flag[4 * tid] = 0;
    }
}
"""

GATHER = """
__kernel void gather(__global const int *index, __global int *seen, __global int *over)
{
    int tid = get_global_id(0);
    if (seen[index[tid]] == 0)
        *over = 1;
}
"""


def _formed(source: str, name: str, local: tuple[int, int, int]):
    result = compile_source(source, "t.cl", "")
    return kernel_ir(result.module, name, KernelSpec(local), result.options).formed


def _sinks(formed) -> list[wg.SinkPlan]:
    return [w.sink for w in find_all(formed.body, wg.WorkItemLoop) if w.sink is not None]


def test_the_sunk_store_is_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(UPDATE, "update", (256, 1, 1))
    plans = _sinks(formed)
    assert plans and all(len(p.others) == 4 for p in plans)  # mask, visited, updating twice
    assert any("sink: work-item loop 1: the store at 11:" in line for line in formed.plans)


def test_a_loop_with_an_unbounded_access_keeps_its_store() -> None:
    formed = _formed(GATHER, "gather", (64, 1, 1))
    assert not _sinks(formed)
    assert any("no sunk store (the access at" in line for line in formed.plans), formed.plans


@pytest.mark.parametrize("density", [0.0, 0.001, 0.3, 1.0])
@pytest.mark.parametrize("n, global_size, local", [(5000, 5120, 256), (300, 320, 64)])
def test_the_flag_is_stored_where_a_lane_updates(density: float, n: int, global_size: int,
                                                 local: int) -> None:
    rng = np.random.default_rng(int(density * 1000) + n)
    updating = (rng.random(global_size) < density).astype(np.uint8)
    mask = np.zeros(global_size, np.uint8)
    visited = np.zeros(global_size, np.uint8)
    over = np.array([-5], np.int32)
    hit = updating[:n].copy()
    run(UPDATE, "update", (global_size,), (local,), mask, updating, visited, over, np.int32(n))
    assert over[0] == (1 if hit.any() else -5)
    np.testing.assert_array_equal(mask[:n], hit)
    np.testing.assert_array_equal(visited[:n], hit)
    assert not updating[:n].any()
    assert not mask[n:].any()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_store_into_a_buffer_the_loop_also_writes_runs_as_formed(threads: int) -> None:
    """``over`` is the first four bytes of ``flag``: lane 0 stores 7 there, then clears its
    flag byte, so the word ends as 0; stored after the loop it would end as 7."""
    ctx = cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(threads))])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, ALIASED).build()
    lanes = 512
    flag = np.zeros(4 * lanes, np.uint8)
    flag[0] = 1
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    flag_buf = cl.Buffer(ctx, flags, hostbuf=flag)
    out_buf = cl.Buffer(ctx, flags, hostbuf=np.zeros(lanes, np.int32))
    program.aliased(queue, (lanes,), (64,), flag_buf, flag_buf, out_buf)
    got_flag = np.empty_like(flag)
    got_out = np.empty(lanes, np.int32)
    cl.enqueue_copy(queue, got_flag, flag_buf)
    cl.enqueue_copy(queue, got_out, out_buf)
    assert not got_flag.any()
    assert got_out[0] == 1 and not got_out[1:].any()
    assert _sinks(_formed(ALIASED, "aliased", (64, 1, 1)))  # the plan is there, the test declined
