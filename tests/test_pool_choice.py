"""The choice between running a launch shape on the calling thread alone and on the CPU
device's pool (ppcl/devices/cpu/alone.py): decided from measured times, never from a run of
the losing mode on the pool's side, followed as the work of a shape changes, and every group
runs exactly once whichever mode a launch takes."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.cpu import CPUDevice
from ppcl.devices.cpu.alone import (
    FIRST_INTERVAL,
    MOST_INTERVAL,
    TASK_ALONE,
    TASK_MEASURE,
    PoolChoice,
)
from ppcl.devices.interface import NDRange
from ppcl.runtime.platform import Device as RuntimeDevice


def _pooled(choice: PoolChoice, total: int, caller: int, caller_chunks: int, chunks: int) -> bool:
    flags = choice.sample_flags()
    assert flags == TASK_MEASURE  # on the pool
    return choice.observe(flags, total, caller, caller_chunks, chunks)


def test_a_launch_whose_hand_off_costs_more_than_its_work_goes_alone() -> None:
    choice = PoolChoice()
    assert choice.countdown == 1 and choice.flags() == 0  # the first launch is sampled
    # the caller ran 8 of 8 chunks in 0.6 us; the call took 0.8 us
    assert _pooled(choice, 800, 600, 8, 8)
    assert choice.alone and choice.flags() == TASK_ALONE
    assert "0.6 us alone (estimated from 8 of 8 chunks) against 0.8 us on the pool" in \
        choice.changed
    assert choice.countdown == FIRST_INTERVAL


def test_a_launch_the_pool_shares_stays_on_the_pool_and_samples_less_often() -> None:
    choice = PoolChoice()
    intervals = []
    for _ in range(14):
        # 2 of 16 chunks took the caller 20 us: alone would take about 160 us, pooled 25 us
        assert not _pooled(choice, 25_000, 20_000, 2, 16)
        intervals.append(choice.interval)
        choice.countdown = 1  # jump to the next sample
    assert not choice.alone
    assert intervals[:4] == [2, 4, 8, 16] and intervals[-1] == MOST_INTERVAL


def test_alone_probes_the_pool_and_goes_back_when_the_work_grows() -> None:
    choice = PoolChoice()
    assert _pooled(choice, 800, 600, 8, 8)
    choice.countdown = 1
    assert choice.sample_flags() == TASK_MEASURE | TASK_ALONE  # measured alone first
    assert not choice.observe(TASK_MEASURE | TASK_ALONE, 700, 0, 0, 0)
    assert choice.countdown == 1  # the next launches probe the pool
    assert not _pooled(choice, 50_000, 300, 8, 8)  # waking the workers: not compared
    assert choice.alone and choice.countdown == 1
    assert not _pooled(choice, 900, 500, 4, 8)  # the pool is slower: stay alone
    assert choice.alone and choice.interval == 2 * FIRST_INTERVAL
    # the arguments now give the shape more work: alone 400 us, the pool 60 us
    choice.countdown = 1
    choice.observe(choice.sample_flags(), 400_000, 0, 0, 0)
    assert not _pooled(choice, 90_000, 40_000, 3, 16)
    assert _pooled(choice, 60_000, 40_000, 3, 16)
    assert not choice.alone and choice.flags() == 0
    assert "60.0 us on the pool against 400.0 us alone" in choice.changed
    assert choice.interval == 4 * FIRST_INTERVAL  # a poor estimate is sampled less often


def test_a_short_pooled_launch_without_a_clear_estimate_is_measured_alone() -> None:
    """The caller ran none of the chunks (no estimate), or an estimate too close to tell:
    the next launch runs alone, measured, and the faster mode stays."""
    choice = PoolChoice()
    assert not _pooled(choice, 2_300, 0, 0, 16)  # the workers took every chunk
    assert choice.countdown == 1 and choice.sample_flags() == TASK_MEASURE | TASK_ALONE
    assert choice.observe(TASK_MEASURE | TASK_ALONE, 400, 0, 0, 0)
    assert choice.alone and "0.4 us alone against 2.3 us on the pool (measured)" in \
        choice.changed
    # an estimate of 1.5x the pooled time is measured too; alone loses here: the pool stays
    other = PoolChoice()
    assert not _pooled(other, 20_000, 15_000, 4, 8)
    assert other.sample_flags() == TASK_MEASURE | TASK_ALONE
    assert not other.observe(TASK_MEASURE | TASK_ALONE, 30_000, 0, 0, 0)
    assert not other.alone and other.sample_flags() == TASK_MEASURE
    assert other.countdown == other.interval == 2  # sampled less often from now on
    # no estimate for a longer launch: no probe (alone might take 16 threads' work)
    longer = PoolChoice()
    assert not _pooled(longer, 30_000, 0, 0, 16)
    assert longer.sample_flags() == TASK_MEASURE and longer.interval == 2


def test_a_long_launch_never_goes_alone_whatever_the_estimate() -> None:
    choice = PoolChoice()
    # chunks of unequal work: the caller's 8 of 64 took 30 us, the launch 400 us
    assert not _pooled(choice, 400_000, 30_000, 8, 64)
    assert not choice.alone


@pytest.mark.parametrize("flags", [0, TASK_ALONE, TASK_MEASURE, TASK_MEASURE | TASK_ALONE])
def test_each_mode_runs_every_group_once_and_reports_its_times(flags: int) -> None:
    ctx = cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(4))])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, """
        __kernel void count(__global int *hits, __global int *items)
        {
            atomic_inc(&hits[get_group_id(0)]);
            items[get_global_id(0)] += 1;
        }""").build()
    kernel = program.count
    groups, local = 64, 16
    hits = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, groups * 4)
    items = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, groups * local * 4)
    cl.enqueue_fill_buffer(queue, hits, np.int32(0), 0, groups * 4)
    cl.enqueue_fill_buffer(queue, items, np.int32(0), 0, groups * local * 4)
    kernel(queue, (groups * local,), (local,), hits, items)  # makes the launch and its task
    (launch,) = [v for v in kernel._launches.values()]
    task = launch._task
    for _ in range(3):
        task.flags = flags
        task.total_ns = task.caller_ns = task.caller_chunks = task.chunks = 7  # stale values
        launch._pool.run(launch._task_ref, None, "count")
        if flags & TASK_MEASURE:
            assert task.total_ns > 0
            if flags & TASK_ALONE:
                assert task.caller_chunks == task.chunks == 0
            else:
                assert 0 <= task.caller_chunks <= task.chunks and task.chunks > 0
                assert task.caller_ns >= 0
    got_hits = np.empty(groups, np.int32)
    got_items = np.empty(groups * local, np.int32)
    cl.enqueue_copy(queue, got_hits, hits)
    cl.enqueue_copy(queue, got_items, items)
    assert (got_hits == 4 * local).all() and (got_items == 4).all()


def test_a_tiny_launch_repeated_keeps_its_results_whichever_mode_it_takes() -> None:
    ctx = cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(2))])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, """
        __kernel void step(__global float *a, __global const float *b, int n)
        {
            int i = get_global_id(0);
            if (i > 0 && i < n - 1)
                a[i] = 0.5f * (b[i - 1] + b[i + 1]);
        }""").build()
    n = 1024
    host = np.linspace(0, 1, n, dtype=np.float32)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a, b = cl.Buffer(ctx, flags, hostbuf=host), cl.Buffer(ctx, flags, hostbuf=host)
    want_a, want_b = host.copy(), host.copy()
    for step in range(300):  # samples at 1, 3, 7, ...: both modes are taken in turn
        dst, src = (a, b) if step % 2 == 0 else (b, a)
        program.step(queue, (n,), (64,), dst, src, np.int32(n))
        w_dst, w_src = (want_a, want_b) if step % 2 == 0 else (want_b, want_a)
        w_dst[1:-1] = np.float32(0.5) * (w_src[:-2] + w_src[2:])
    got = np.empty(n, np.float32)
    cl.enqueue_copy(queue, got, a)
    np.testing.assert_array_equal(got, want_a)


def test_a_new_shape_of_a_kernel_starts_where_its_last_shape_stands() -> None:
    prior = PoolChoice()
    assert _pooled(prior, 800, 600, 8, 8)  # went alone
    prior.countdown = 1
    shrinking = PoolChoice.following(prior, more_groups=False)
    assert shrinking.alone and shrinking.flags() == TASK_ALONE
    assert shrinking.interval == prior.interval and shrinking.countdown == 1
    prior.countdown = 2
    assert PoolChoice.following(prior, more_groups=False).countdown == 2  # the schedule goes on
    growing = PoolChoice.following(prior, more_groups=True)
    assert growing.alone and growing.countdown == 1  # more work: sampled at once
    pooled = PoolChoice()
    assert not _pooled(pooled, 25_000, 20_000, 2, 16)
    after = PoolChoice.following(pooled, more_groups=True)
    assert not after.alone and after.countdown == pooled.countdown == FIRST_INTERVAL


def test_shrinking_shapes_of_a_kernel_follow_the_last_shapes_choice() -> None:
    """A factorization-like loop: one launch per shape, the shape shrinking each step; every
    launch's results are right, and a shape after one that ran alone starts alone."""
    ctx = cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(4))])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, """
        __kernel void scale(__global float *a, float f)
        {
            a[get_global_id(0)] *= f;
        }""").build()
    n = 64 * 40
    host = np.ones(n, np.float32)
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    want = host.copy()
    kernel = program.scale
    for step in range(40):
        size = n - 64 * step
        kernel(queue, (size,), (64,), a, np.float32(1.01))
        want[:size] *= np.float32(1.01)
    got = np.empty(n, np.float32)
    cl.enqueue_copy(queue, got, a)
    np.testing.assert_array_equal(got, want)
    # a new shape starts in the mode the kernel's newest shape has at that moment
    device_program = program._device_program(queue.device)

    def shape(groups: int) -> NDRange:
        return NDRange(1, (64 * groups, 1, 1), (64, 1, 1), (0, 0, 0))

    first = device_program.prepare("scale", shape(50))
    first._choice.alone, first._choice.countdown = True, 3
    fewer = device_program.prepare("scale", shape(49))
    assert fewer._choice.alone and fewer._choice.countdown == 3
    more = device_program.prepare("scale", shape(51))
    assert more._choice.alone and more._choice.countdown == 1  # sampled at once
    more._choice.alone = False
    after = device_program.prepare("scale", shape(48))
    assert not after._choice.alone
