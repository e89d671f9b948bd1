"""Zero runs (``transforms/skip.py``): blocks of lanes whose guard reads zero at unit stride are
skipped at once, recorded in the IR and in the plans, and every lane that passes the guard still
runs, whatever the flags' pattern, the guard's bounds and the blocks' edges."""

from __future__ import annotations

import numpy as np
import pytest

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from tests.launch import run

FRONTIER = """
__kernel void expand(__global const int *offsets, __global const int *edges,
                     __global uchar *mask, __global int *out, int n)
{
    int tid = get_global_id(0);
    if (tid < n && mask[tid]) {
        mask[tid] = 0;
        int sum = 0;
        for (int e = offsets[tid]; e < offsets[tid + 1]; e++)
            sum += edges[e];
        out[tid] = sum + 1;
    }
}
"""

FLAGS = """
__kernel void mark(__global const TYPE *flag, __global int *out, int w)
{
    int x = get_global_id(0) + 1;
    if (x >= w || flag[x] == 0)
        return;
    out[x] = 1000 + x;
}
"""

STRIDED = """
__kernel void strided(__global const uchar *mask, __global int *out)
{
    int i = get_global_id(0);
    if (!mask[2 * i])
        return;
    out[i] = 1;
}
"""

EQUAL_FIRST = """
__kernel void equal(__global const uchar *mask, __global int *out)
{
    int i = get_global_id(0);
    if (i == 3 || !mask[i])
        return;
    out[i] = 1;
}
"""


def _formed(source: str, name: str, local: tuple[int, int, int], options: str = ""):
    result = compile_source(source, "t.cl", options)
    return kernel_ir(result.module, name, KernelSpec(local), result.options).formed


def _skips(formed) -> list[wg.SkipPlan]:
    return [w.skip for w in find_all(formed.body, wg.WorkItemLoop) if w.skip is not None]


def test_the_skip_is_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(FRONTIER, "expand", (256, 1, 1))
    plans = _skips(formed)  # the split's fast copy and the guarded loop, each its own
    assert len(plans) == 2 and all(p.width == 64 for p in plans)
    assert sorted(len(p.bounds) for p in plans) == [0, 1]  # tid >= n, in the guarded loop
    assert any("skip: work-item loop 1: blocks of 64 lanes skipped" in line
               for line in formed.plans), formed.plans


def test_a_guard_the_blocks_cannot_test_gets_no_skip() -> None:
    assert not _skips(_formed(STRIDED, "strided", (64, 1, 1)))
    formed = _formed(EQUAL_FIRST, "equal", (64, 1, 1))
    assert any("work-item loop 1: no skip (a test of the guard before its load is not a "
               "comparison" in line for line in formed.plans), formed.plans
    # past lane 3 the split decides i == 3 false: there the guard is the load's test alone
    assert any("work-item loop 2: blocks of 64 lanes skipped" in line
               for line in formed.plans), formed.plans


def _frontier_inputs(n: int, pattern: str, rng: np.random.Generator):
    degrees = rng.integers(0, 5, n)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(degrees, out=offsets[1:])
    edges = rng.integers(-50, 50, max(1, int(offsets[-1]))).astype(np.int32)
    mask = np.zeros(n, np.uint8)
    if pattern == "sparse":
        mask[rng.choice(n, max(1, n // 100), replace=False)] = 1
    elif pattern == "dense":
        mask[:] = rng.random(n) < 0.6
    elif pattern == "edges":  # set lanes at and beside every block edge, and the last lane
        for k in range(0, n, 32):  # every block edge, and half-way through each
            mask[k] = 1
            mask[max(0, k - 1)] = 1
        mask[n - 1] = 1
    elif pattern == "runs":  # long zero runs, then a few lanes set in one block
        mask[n // 2: n // 2 + 3] = 1
        mask[n // 3] = 2
    return offsets, edges, mask


@pytest.mark.parametrize("pattern", ["sparse", "dense", "edges", "runs", "none"])
@pytest.mark.parametrize("n, global_size, local", [
    (1000, 1024, 256),  # the last group's lanes past n: the bound decides, not the flags
    (4096, 4096, 64),
    (70, 96, 16),       # a group narrower than a block
    (300, 300, 100),    # blocks that end inside a group
])
def test_every_lane_that_passes_the_guard_runs(pattern: str, n: int, global_size: int,
                                               local: int) -> None:
    rng = np.random.default_rng(n + len(pattern))
    offsets, edges, mask = _frontier_inputs(n, pattern, rng)
    # the flags past n are set: a lane past n fails the guard by its bound only
    padded = np.ones(global_size, np.uint8)
    padded[:n] = mask
    out = np.full(global_size, -7, np.int32)
    run(FRONTIER, "expand", (global_size,), (local,), offsets, edges, padded, out, np.int32(n))
    want = np.full(global_size, -7, np.int32)
    sums = np.add.reduceat(np.append(edges, 0), offsets[:-1]) * (np.diff(offsets) > 0)
    hit = mask != 0
    want[:n][hit] = sums[hit] + 1
    np.testing.assert_array_equal(out, want)
    assert not padded[:n].any()  # every passing lane cleared its flag
    assert padded[n:].all()


@pytest.mark.parametrize("ctype, dtype", [("int", np.int32), ("float", np.float32),
                                          ("uchar", np.uint8)])
def test_flags_of_each_type(ctype: str, dtype: type) -> None:
    w = 1200
    rng = np.random.default_rng(3)
    flag = np.zeros(w + 64, dtype)
    flag[:w][rng.random(w) < 0.05] = 1
    flag[w:] = 1  # past w: the bound decides
    if dtype is np.float32:
        flag[400:480] = -0.0  # zero as a value, not as bits: those lanes run, and fail
        flag[700] = np.nan  # not zero: passes
    out = np.zeros(w + 64, np.int32)
    source = FLAGS.replace("TYPE", ctype)
    run(source, "mark", (1280,), (128,), flag, out, np.int32(w))
    xs = np.arange(w + 64)
    want = np.where((xs >= 1) & (xs < w) & (flag != 0), 1000 + xs, 0)
    want[700] = 1700 if dtype is np.float32 else want[700]
    np.testing.assert_array_equal(out, want)
    assert _skips(_formed(source, "mark", (128, 1, 1)))
