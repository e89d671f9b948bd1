"""Work-item loops clipped by a guard on group-level values (``split.group_bounds``).

GPU-style kernels guard work with the local id against a value every work-item of the group
shares: a tree reduction's ``if (lid < stride)`` inside a loop over ``stride``, a scan's
``if (lid < d)``, a group's result stored under ``if (lid == 0)``. The work-item loop then runs
only the lanes between the guard's bounds, computed at group level. Each kernel here is
compared with the same kernel built with ``-ppcl-no-split`` (no clipping) and with numpy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from tests.launch import run
from tests.test_split import _formed

TREE = """
__kernel void tree(__global const float *x, __global float *partial, __local float *scratch,
                   int n)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    scratch[lid] = gid < n ? x[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = get_local_size(0) / 2; stride > 0; stride >>= 1) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
"""

# the group's result written by the first work-item, the others leaving by an early return
FIRST_ONLY = """
__kernel void first_only(__global const int *x, __global int *out)
{
    __local int total;
    if (get_local_id(0) == 0)
        total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&total, x[get_global_id(0)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) != 0)
        return;
    out[get_group_id(0)] = total;
}
"""

# work-efficient exclusive scan of one group's 2 * local size elements (up- and down-sweep), as
# the kernel corpus has it
BLELLOCH = (Path(__file__).parent / "kernels" / "prefix_sum_int_blelloch.cl").read_text()

# a band of lanes between two group-level values, in a 2D group: rows of a tile folded along x
ROWS = """
__kernel void rows(__global const float *x, __global float *out, int skip)
{
    __local float tile[8][16];
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = x[get_global_id(1) * get_global_size(0) + get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 8; s > 0; s >>= 1) {
        if (lx >= skip && lx < s + skip && lx + s < 16)
            tile[ly][lx] += tile[ly][lx + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = tile[ly][lx];
}
"""


def _with_and_without(source: str, name: str, gsize: tuple[int, ...],
                      lsize: tuple[int, ...], arrays: list[object],
                      *scalars: object) -> list[np.ndarray]:
    """The arrays after the kernel built as usual; each equal to those of a build without
    clipping (``-ppcl-no-split``)."""
    clipped = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    plain = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    run(source, name, gsize, lsize, *clipped, *scalars)
    run(source, name, gsize, lsize, *plain, *scalars, options="-ppcl-no-split")
    for got, want in zip(clipped, plain, strict=True):
        if isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, want)
    return [a for a in clipped if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("local,n", [(1, 5), (8, 64), (64, 1000), (256, 4096), (128, 300)])
def test_tree_reduction(local: int, n: int) -> None:
    import ppcl as cl

    rng = np.random.default_rng(local + n)
    groups = (n + local - 1) // local
    x = rng.integers(-50, 50, groups * local).astype(np.float32)
    partial = np.zeros(groups, np.float32)
    _, got = _with_and_without(TREE, "tree", (groups * local,), (local,),
                               [x, partial, cl.LocalMemory(4 * local)], np.int32(n))
    want = np.array([x[g * local:min((g + 1) * local, n)].sum() for g in range(groups)],
                    dtype=np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("local,groups", [(1, 3), (16, 4), (96, 2)])
def test_result_of_the_first_work_item(local: int, groups: int) -> None:
    x = np.arange(local * groups, dtype=np.int32)
    out = np.zeros(groups, np.int32)
    _, got = _with_and_without(FIRST_ONLY, "first_only", (local * groups,), (local,),
                               [x, out])
    np.testing.assert_array_equal(got, x.reshape(groups, local).sum(axis=1))


@pytest.mark.parametrize("local,groups", [(1, 2), (4, 3), (64, 2), (256, 1)])
def test_blelloch_scan(local: int, groups: int) -> None:
    import ppcl as cl

    rng = np.random.default_rng(local)
    n = 2 * local
    data = rng.integers(-9, 9, n * groups).astype(np.int32)
    out = np.zeros_like(data)
    sums = np.zeros(groups, np.int32)
    _, got, got_sums = _with_and_without(BLELLOCH, "prefix_sum_int", (local * groups,),
                                         (local,), [data, out, sums, cl.LocalMemory(4 * n)])
    blocks = data.reshape(groups, n)
    want = np.concatenate([np.cumsum(b) - b for b in blocks]).astype(np.int32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_sums, blocks.sum(axis=1))


@pytest.mark.parametrize("skip", [0, 3, 9, 20])
def test_band_of_lanes_in_a_2d_group(skip: int) -> None:
    x = np.random.default_rng(skip).random(32 * 16, dtype=np.float32)
    out = np.zeros_like(x)
    _, got = _with_and_without(ROWS, "rows", (32, 16), (16, 8), [x, out], np.int32(skip))
    tile = x.reshape(16, 32).copy()
    for gx in (0, 16):  # numpy's run of the same folds, group by group
        t = tile[:, gx:gx + 16].copy()
        for s in (8, 4, 2, 1):
            for lx in range(16):
                if skip <= lx < s + skip and lx + s < 16:
                    t[:, lx] += t[:, lx + s]
        tile[:, gx:gx + 16] = t
    np.testing.assert_allclose(got.reshape(16, 32), tile, rtol=1e-6)


def test_the_clip_is_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(TREE, "tree", (64, 1, 1))
    lines = [p for p in formed.plans if "the guard's bounds at group level" in p]
    assert any("gid0 <= base0 + stride - 1" in line for line in lines), formed.plans
    assert any("gid0 >= base0 and gid0 <= base0" in line for line in lines), formed.plans
    clipped = [loop for loop in find_all(formed.body, wg.WorkItemLoop) if loop.clip_upper]
    assert len(clipped) == 2
    # the first loop (every lane stores its element) is not clipped
    first = find_all(formed.body, wg.WorkItemLoop)[0]
    assert not first.clip_lower and not first.clip_upper


# uniform updates at the end of a barrier loop's body: formed at group level
UPDATES = """
__kernel void updates(__global float *out, __local float *t, int steps)
{
    int lid = get_local_id(0);
    float scale = 1.0f;
    int k = 0;
    for (int s = 0; s < steps; s++) {
        t[lid] = lid * scale + k;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[s * get_global_size(0) + get_global_id(0)] = t[(lid + 1) % get_local_size(0)];
        scale *= 0.5f;
        k++;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
"""


def test_uniform_updates_at_the_end_of_a_region_are_group_scalars() -> None:
    formed = _formed(UPDATES, "updates", (8, 1, 1))
    assert {"scale", "k"} <= set(formed.group_scalars), formed.group_scalars
    assert not {"scale", "k"} & set(formed.context_vars)
    # the scan's offset (doubled after each guarded step): all four sweeps' loops are clipped
    formed = _formed(BLELLOCH, "prefix_sum_int", (64, 1, 1))
    assert "offset" in formed.group_scalars
    clipped = [loop for loop in find_all(formed.body, wg.WorkItemLoop) if loop.clip_upper]
    assert len(clipped) == 3


@pytest.mark.parametrize("local,groups,steps", [(8, 2, 5), (1, 3, 2), (32, 1, 0)])
def test_uniform_updates_at_the_end_of_a_region(local: int, groups: int, steps: int) -> None:
    import ppcl as cl

    n = local * groups
    out = np.zeros(max(steps, 1) * n, np.float32)
    run(UPDATES, "updates", (n,), (local,), out, cl.LocalMemory(4 * local), np.int32(steps))
    want = np.zeros_like(out)
    for s in range(steps):
        lids = (np.arange(n) % local + 1) % local
        want[s * n:(s + 1) * n] = lids * np.float32(0.5 ** s) + s
    np.testing.assert_array_equal(out, want)
