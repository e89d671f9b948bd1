"""Parallel replay under the command overlay: independent steps share a wave and, when the
wave is concurrent, run at once with the results of a plain queue; dependent steps (read after
write, write after read, write after write, overlapping sub-buffer bytes, host memory moved by
two transfers, wait lists) never share a wave; a failure inside a concurrent wave fails its
events in queue order."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.cpu import CPUDevice
from ppcl.overlay import recorder
from ppcl.overlay.waves import Footprint, Span, concurrency, conflict, waves
from ppcl.runtime.errors import ERROR_CODES
from ppcl.runtime.platform import Device as RuntimeDevice

mf = cl.mem_flags
COMPLETE = cl.command_execution_status.COMPLETE
WAIT_LIST_ERROR = ERROR_CODES["EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"]
N = 64  # one work-group per launch: below the 4 threads of the device below

SOURCE = """
__kernel void work(__global const float *a, __global float *b, int rounds)
{
    int i = get_global_id(0);
    float v = a[i];
    for (int r = 0; r < rounds; r++) v = v * 0.999f + 0.5f;
    b[i] = v;
}

__kernel void poke(__global float *b, __global const long *where)
{
    b[get_global_id(0) + where[0]] = 1.0f;
}
"""


@pytest.fixture(scope="module")
def ctx4():
    return cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(4))])


@pytest.fixture(scope="module")
def prg(ctx4):
    return cl.Program(ctx4, SOURCE).build()


@pytest.fixture
def queue(ctx4):
    q = cl.CommandQueue(ctx4)
    assert cl.overlay.enable(q)
    yield q
    cl.overlay.disable(q)


@pytest.fixture
def pays(monkeypatch):
    """Concurrent waves run at once after the timed replays, whatever the handoff costs."""
    monkeypatch.setattr(recorder, "PAYS_FACTOR", 0)


@pytest.fixture
def threads_seen(monkeypatch):
    """The threads that ran each step, by the first command of the step."""
    seen: dict[int, int] = {}
    attempt = recorder._attempt

    def recording(step, commands):
        seen[step.members[0]] = threading.get_ident()
        return attempt(step, commands)
    monkeypatch.setattr(recorder, "_attempt", recording)
    return seen


def random_buffer(ctx, rng, n=N):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=rng.random(n, dtype=np.float32))


def read(queue, buf, n=N):
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, buf)
    return out


def live_waves(graph):
    return [node.wave for node in graph.nodes if node.status == "run"]


# ---------------------------------------------------------------------- the analysis


def _kernel(*spans: Span, groups: int = 1, events=(), waits=()) -> Footprint:
    return Footprint(spans, False, frozenset(events), frozenset(waits), groups, True)


@pytest.mark.parametrize("first, second, why", [
    (_kernel(Span(0, 0, 64, True)), _kernel(Span(0, 0, 64, False)), "raw"),
    (_kernel(Span(0, 0, 64, False)), _kernel(Span(0, 0, 64, True)), "war"),
    (_kernel(Span(0, 0, 64, True)), _kernel(Span(0, 0, 64, True)), "waw"),
    (_kernel(Span(0, 0, 512, True)), _kernel(Span(0, 256, 768, True)), "waw"),  # sub-ranges
    (Footprint((Span(0, 0, 64, False),), True, frozenset(), frozenset(), None, True),
     Footprint((Span(1, 0, 64, True),), True, frozenset(), frozenset(), None, True), "host"),
    (_kernel(Span(0, 0, 64, True), events=[7]), _kernel(Span(1, 0, 64, True), waits=[7]),
     "event"),
])
def test_dependent_footprints_conflict_and_start_a_new_wave(first, second, why):
    assert conflict(first, second)
    assert waves([first, second]) == [[0], [1]]


def test_independent_footprints_share_a_wave():
    prints = [_kernel(Span(0, 0, 512, True), Span(2, 0, 64, False)),
              _kernel(Span(0, 512, 1024, True), Span(2, 0, 64, False)),  # disjoint bytes
              _kernel(Span(1, 0, 64, True)),
              _kernel(Span(1, 0, 64, False))]  # reads what the third writes
    assert waves(prints) == [[0, 1, 2], [3]]


def test_concurrency_follows_group_counts_and_device_threads():
    small = _kernel(Span(0, 0, 64, True), groups=1)
    big = _kernel(Span(1, 0, 64, True), groups=64)
    copy = Footprint((Span(2, 0, 64, True),), True, frozenset(), frozenset(), None, True)
    assert concurrency([small, small], ["a", "b"], 4)[0]
    assert not concurrency([small, big], ["a", "b"], 4)[0]
    assert "fills" in concurrency([small, big], ["a", "b"], 4)[1]
    assert concurrency([big, copy], ["a", "copy"], 4)[0]  # a transfer copies meanwhile
    assert not concurrency([small, small], ["a", "b"], 1)[0]
    assert not concurrency([small], ["a"], 4)[0]


# ---------------------------------------------------------------------- replays


def test_independent_small_kernels_run_at_once_with_the_results_of_a_plain_queue(
        ctx4, prg, pays, threads_seen):
    queue = cl.CommandQueue(ctx4, properties=cl.command_queue_properties.PROFILING_ENABLE)
    assert cl.overlay.enable(queue)
    rng = np.random.default_rng(0)
    inputs = [random_buffer(ctx4, rng) for _ in range(4)]  # no shared input: no fusion
    outputs = [cl.Buffer(ctx4, mf.READ_WRITE, N * 4) for _ in range(4)]
    plain = cl.CommandQueue(ctx4)
    for k, (src, dst) in enumerate(zip(inputs, outputs)):
        prg.work(plain, (N,), (N,), src, dst, np.int32(50 + k))
    expected = [read(plain, dst) for dst in outputs]
    for _ in range(recorder.TIMED_REPLAYS + 2):
        threads_seen.clear()
        events = [prg.work(queue, (N,), (N,), src, dst, np.int32(50 + k))
                  for k, (src, dst) in enumerate(zip(inputs, outputs))]
        queue.finish()
        assert all(e.command_execution_status == COMPLETE for e in events)
        for got, want in zip((read(queue, dst) for dst in outputs), expected):
            np.testing.assert_array_equal(got, want)
        for e in events:
            assert e.profile.queued <= e.profile.submit <= e.profile.start <= e.profile.end
    graph = cl.overlay.graph()
    assert live_waves(graph) == [0, 0, 0, 0]
    assert graph.concurrent == {0}
    assert "wave 0, concurrent" in graph.to_dot()
    assert len(set(threads_seen.values())) > 1  # the last replay ran the wave at once


def test_read_after_write_and_write_after_read_split_waves(ctx4, prg, queue, pays):
    host = [np.random.default_rng(1).random(N, dtype=np.float32) for _ in range(3)]

    def run(q):
        x, y, c = (cl.Buffer(ctx4, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=h) for h in host)
        z = cl.Buffer(ctx4, mf.READ_WRITE, N * 4)
        for _ in range(recorder.TIMED_REPLAYS + 1):
            prg.work(q, (N,), (1,), x, y, np.int32(3))  # 64 groups: fills the device
            prg.work(q, (N,), (N,), y, z, np.int32(5))  # reads y: raw
            prg.work(q, (N,), (N,), c, y, np.int32(7))  # writes y the previous one reads: war
            q.finish()
            if q is queue:
                assert live_waves(cl.overlay.graph()) == [0, 1, 2]
        return read(q, y), read(q, z)

    got = run(queue)
    for mine, theirs in zip(got, run(cl.CommandQueue(ctx4))):
        np.testing.assert_array_equal(mine, theirs)


def test_overlapping_sub_buffers_split_waves_and_disjoint_ones_share_one(ctx4, prg, queue,
                                                                         pays):
    rng = np.random.default_rng(2)
    src = random_buffer(ctx4, rng, 4 * N)
    big = cl.Buffer(ctx4, mf.READ_WRITE, 4 * N * 4)
    first = big.get_sub_region(0, 2 * N * 4)
    second = big.get_sub_region(N * 4, 2 * N * 4)  # overlaps the first's upper half
    third = big.get_sub_region(3 * N * 4, N * 4)  # disjoint from the first
    prg.work(queue, (2 * N,), (2 * N,), src, first, np.int32(2))
    prg.work(queue, (N,), (N,), src, third, np.int32(3))
    prg.work(queue, (2 * N,), (2 * N,), src, second, np.int32(4))
    got = read(queue, big, 4 * N)
    assert live_waves(cl.overlay.graph()) == [0, 0, 1]
    plain = cl.CommandQueue(ctx4)
    want = cl.Buffer(ctx4, mf.READ_WRITE, 4 * N * 4)
    prg.work(plain, (2 * N,), (2 * N,), src, want.get_sub_region(0, 2 * N * 4), np.int32(2))
    prg.work(plain, (N,), (N,), src, want.get_sub_region(3 * N * 4, N * 4), np.int32(3))
    prg.work(plain, (2 * N,), (2 * N,), src, want.get_sub_region(N * 4, 2 * N * 4), np.int32(4))
    np.testing.assert_array_equal(got, read(plain, want, 4 * N))


def test_a_host_array_read_back_then_written_keeps_its_order(ctx4, prg, queue, pays):
    rng = np.random.default_rng(3)
    a, b = random_buffer(ctx4, rng), cl.Buffer(ctx4, mf.READ_WRITE, N * 4)
    host = np.zeros(N, np.float32)
    for _ in range(recorder.TIMED_REPLAYS + 1):
        cl.enqueue_copy(queue, host, a, is_blocking=False)  # into the host array
        cl.enqueue_copy(queue, b, host, is_blocking=False)  # out of it again
        queue.finish()
        assert live_waves(cl.overlay.graph()) == [0, 1]
        np.testing.assert_array_equal(read(queue, b), read(queue, a))


def test_a_failure_inside_a_concurrent_wave_fails_it_and_the_rest_in_queue_order(
        ctx4, prg, queue, pays, threads_seen):
    rng = np.random.default_rng(4)
    inputs = [random_buffer(ctx4, rng) for _ in range(3)]
    outputs = [cl.Buffer(ctx4, mf.READ_WRITE, N * 4) for _ in range(3)]
    target = cl.Buffer(ctx4, mf.READ_WRITE, N * 4)
    where = cl.Buffer(ctx4, mf.READ_WRITE, 8)
    later = cl.Buffer(ctx4, mf.READ_WRITE, N * 4)

    def record():
        events = [prg.work(queue, (N,), (N,), inputs[0], outputs[0], np.int32(9)),
                  prg.poke(queue, (N,), (N,), target, where),
                  prg.work(queue, (N,), (N,), inputs[1], outputs[1], np.int32(9)),
                  prg.work(queue, (N,), (N,), inputs[2], outputs[2], np.int32(9))]
        events.append(prg.work(queue, (N,), (N,), outputs[0], later, np.int32(1)))
        return events

    cl.enqueue_copy(queue, where, np.zeros(1, np.int64))
    # timed, then judged to pay (the first replay makes a plan of its own: the second
    # specializes the scalars equal in both)
    for _ in range(recorder.TIMED_REPLAYS + 1):
        record()
        queue.finish()
    assert live_waves(cl.overlay.graph()) == [0, 0, 0, 0, 1]
    cl.enqueue_copy(queue, where, np.array([1 << 40], np.int64))  # poke now faults
    events = record()
    threads_seen.clear()
    queue.finish()
    assert len(set(threads_seen.values())) > 1
    statuses = [e.command_execution_status for e in events]
    assert statuses[0] == COMPLETE
    assert statuses[1] < 0 and statuses[1] != WAIT_LIST_ERROR
    assert statuses[2:] == [WAIT_LIST_ERROR] * 3
    with pytest.raises(cl.Error):
        events[1].wait()
    # the queue and the device go on
    cl.enqueue_copy(queue, where, np.zeros(1, np.int64))
    record()
    queue.finish()
    np.testing.assert_array_equal(read(queue, target), np.ones(N, np.float32))

def test_an_interrupt_on_a_helper_reaches_the_caller(ctx4, prg, queue, pays, monkeypatch):
    rng = np.random.default_rng(5)
    inputs = [random_buffer(ctx4, rng) for _ in range(3)]
    outputs = [cl.Buffer(ctx4, mf.READ_WRITE, N * 4) for _ in range(3)]

    def record():
        return [prg.work(queue, (N,), (N,), src, dst, np.int32(4))
                for src, dst in zip(inputs, outputs)]

    for _ in range(recorder.TIMED_REPLAYS + 1):
        record()
        queue.finish()
    main = threading.get_ident()
    attempt = recorder._attempt

    def interrupted(step, commands):
        if threading.get_ident() != main and step.members[0] == 1:
            return recorder.Outcome(0, 0, KeyboardInterrupt())
        return attempt(step, commands)
    monkeypatch.setattr(recorder, "_attempt", interrupted)
    events = record()
    with pytest.raises(KeyboardInterrupt):
        queue.finish()
    statuses = [e.command_execution_status for e in events]
    assert statuses[0] == COMPLETE
    assert statuses[1] < 0 and statuses[2] == WAIT_LIST_ERROR
