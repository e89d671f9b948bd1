"""The reduction layouts of ``ppcl.reduction``: on a CPU device one launch in which each
work-item folds a contiguous chunk into several accumulators and the last to finish folds the
partials. Sizes around the chunk and lane boundaries, dtypes, views, an out-of-order queue and a
completion word left behind by a launch cut short."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl
import ppcl.array as cla
from ppcl import reduction
from ppcl.reduction import ReductionKernel, accumulator_lanes, reduction_layout


def _sizes(device: ppcl.Device, itemsize: int) -> list[int]:
    """Sizes that end inside a run of lanes, on one, and that split into several chunks with a
    short last chunk."""
    lanes = accumulator_lanes(device, itemsize)
    least = reduction.MIN_CHUNK_BYTES // itemsize
    return [0, 1, lanes - 1, lanes, lanes + 1, 2 * least + 3, 5 * least + lanes + 7]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_sums_over_awkward_sizes(queue, dtype):
    device = queue.device
    rng = np.random.default_rng(3)
    for n in _sizes(device, np.dtype(dtype).itemsize):
        host = (rng.integers(-50, 50, n) + (1j * rng.integers(-50, 50, n)
                                           if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
        a = cla.to_device(queue, host)
        got = cla.sum(a).get()
        assert got == host.sum(dtype=dtype), (dtype, n)  # small integers: exact in any order
        if np.dtype(dtype).kind != "c" and n:
            assert cla.max(a).get() == host.max()
            assert cla.min(a).get() == host.min()


@pytest.mark.cpu_device  # the CPU layout; GPUs take two launches
def test_layout_covers_every_position(queue):
    device = queue.device
    for itemsize in (1, 4, 8, 16):
        lanes = accumulator_lanes(device, itemsize)
        assert 4 <= lanes <= 64
        for n in _sizes(device, itemsize) + [1 << 24]:
            layout = reduction_layout(device, n, itemsize)
            assert layout.items >= 1
            assert layout.items * layout.per_item >= n
            assert (layout.items - 1) * layout.per_item < max(n, 1)  # no idle work-item
            if layout.lanes:
                assert layout.per_item % layout.lanes == 0
                assert layout.items <= reduction.MAX_ITEMS


def test_strided_views_and_dot(queue):
    rng = np.random.default_rng(4)
    host = rng.random((300, 700)).astype(np.float32)
    a = cla.to_device(queue, host)
    view = a[::-3, 5::2]
    np.testing.assert_allclose(cla.sum(view).get(), host[::-3, 5::2].sum(), rtol=1e-5)
    x = rng.random(100_004).astype(np.float64)
    y = rng.random(100_004).astype(np.float64)
    got = cla.dot(cla.to_device(queue, x)[::2], cla.to_device(queue, y)[1::2]).get()
    np.testing.assert_allclose(got, np.dot(x[::2], y[1::2]), rtol=1e-12)


def test_ranged_reduction_kernel(ctx, queue):
    host = np.random.default_rng(5).random(200_001).astype(np.float32)
    a = cla.to_device(queue, host)
    total = ReductionKernel(ctx, np.float64, "0", "a+b", "x[i]", "__global float *x")
    for window in (slice(7, 190_000, 3), slice(10, 11), slice(5, 5)):
        want = host[window].astype(np.float64).sum()
        np.testing.assert_allclose(total(a, range=window).get(), want, rtol=1e-12)


@pytest.mark.cpu_device  # the CPU layout's one launch counts in a completion word
def test_completion_word_of_a_launch_cut_short(queue):
    """A launch that stopped before all its work-items counted leaves its ticket and a count in
    the queue's completion word; the next launch starts the count again."""
    host = np.arange(1 << 20, dtype=np.int64)
    a = cla.to_device(queue, host)
    assert reduction_layout(queue.device, host.size, 8).items > 1
    assert cla.sum(a).get() == host.sum()
    scratch = reduction._scratches[queue]
    stale = np.array([(scratch.ticket << reduction.COUNT_BITS) | 1], np.uint32)  # one counted
    ppcl.enqueue_copy(queue, scratch.done, stale)
    assert cla.sum(a).get() == host.sum()
    assert cla.sum(a[1:]).get() == host[1:].sum()


def test_out_of_order_queue(ctx):
    queue = ppcl.CommandQueue(
        ctx, properties=ppcl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    host = np.random.default_rng(6).integers(-9, 9, 300_000).astype(np.int32)
    a = cla.to_device(queue, host)
    results = [cla.sum(a, queue=queue) for _ in range(3)]
    queue.finish()
    assert [int(r.get()) for r in results] == [int(host.sum())] * 3


def test_map_expr_multiplying_by_the_index(ctx, queue):
    """``i`` of map_expr stands for a position expression (``p + l`` of a lane): unparenthesized,
    ``i * (long)x[i]`` read as ``p + l * x[p + l]``."""
    host = np.arange(5000, dtype=np.int32)
    a = cla.to_device(queue, host)
    weighted = ReductionKernel(ctx, np.int64, "0", "a+b", "i * (long)x[i]", "__global int *x")
    assert weighted(a).get() == (host.astype(np.int64) ** 2).sum()
    assert weighted(a, range=slice(1, 4000, 3)).get() == \
        (host[1:4000:3].astype(np.int64) ** 2).sum()
