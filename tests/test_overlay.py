"""Semantics under the command overlay: every event completes with the right status and order,
blocking calls replay, argument changes after an enqueue do not reach a recorded launch, and
optimized replays compute what the commands would have computed without the overlay."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.overlay.graph import TaskGraph

mf = cl.mem_flags
COMPLETE = cl.command_execution_status.COMPLETE
QUEUED = cl.command_execution_status.QUEUED
N = 256

SOURCE = """
__kernel void scale(__global const float *a, __global float *b, float s)
{
    int i = get_global_id(0);
    b[i] = a[i] * s;
}

__kernel void add(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void blur(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    float left = i > 0 ? a[i - 1] : a[i];
    float right = i < n - 1 ? a[i + 1] : a[i];
    b[i] = (left + a[i] + right) / 3.0f;
}

__kernel void twice(__global const float *a, __global float *b, __global float *c)
{
    int i = get_global_id(0);
    b[i] = a[i] * 2.0f;
    c[i] = a[i] + 1.0f;
}
"""


@pytest.fixture(scope="module")
def prg(ctx):
    return cl.Program(ctx, SOURCE).build()


@pytest.fixture
def queue(ctx):
    q = cl.CommandQueue(ctx)
    assert cl.overlay.enable(q)
    yield q
    cl.overlay.disable(q)


def buffer_of(ctx, array):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=array)


def read(queue, buf, n=N):
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, buf)  # blocking: replays
    return out


def test_kernels_are_recorded_until_a_blocking_read(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    event = prg.scale(queue, (N,), None, abuf, bbuf, np.float32(3))
    assert event._status == QUEUED  # recorded, not run
    np.testing.assert_array_equal(read(queue, bbuf), a * 3)
    assert event.command_execution_status == COMPLETE


def test_status_query_and_wait_replay(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    first = prg.scale(queue, (N,), None, abuf, bbuf, np.float32(2))
    second = prg.scale(queue, (N,), None, bbuf, abuf, np.float32(5))
    assert first.get_info(cl.event_info.COMMAND_EXECUTION_STATUS) == COMPLETE
    assert second.command_execution_status == COMPLETE
    third = prg.scale(queue, (N,), None, abuf, bbuf, np.float32(1))
    third.wait()
    np.testing.assert_array_equal(read(queue, bbuf), np.full(N, 10, np.float32))


def test_callbacks_run_in_queue_order(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    seen: list[str] = []
    first = prg.scale(queue, (N,), None, abuf, bbuf, np.float32(2))
    second = prg.add(queue, (N,), None, abuf, bbuf, abuf)
    first.set_callback(COMPLETE, lambda status: seen.append(f"first {status}"))
    second.set_callback(COMPLETE, lambda status: seen.append(f"second {status}"))
    queue.finish()
    assert seen == ["first 0", "second 0"]
    np.testing.assert_array_equal(read(queue, abuf), np.full(N, 3, np.float32))


def test_user_event_in_wait_list_passes_through(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    gate = cl.UserEvent(ctx)
    held = prg.scale(queue, (N,), None, abuf, bbuf, np.float32(4), wait_for=[gate])
    after = prg.scale(queue, (N,), None, bbuf, abuf, np.float32(0.5))
    assert held.command_execution_status != COMPLETE
    gate.set_status(COMPLETE)
    after.wait()
    assert held.command_execution_status == COMPLETE
    np.testing.assert_array_equal(read(queue, abuf), np.full(N, 2, np.float32))


def test_failed_user_event_fails_the_commands_after_it(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    gate = cl.UserEvent(ctx)
    held = prg.scale(queue, (N,), None, abuf, abuf, np.float32(4), wait_for=[gate])
    gate.set_status(-5)
    with pytest.raises(cl.Error):
        held.wait()
    assert held.command_execution_status < 0


def test_out_of_order_queue_passes_through(ctx, prg):
    ooo = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    assert not cl.overlay.enable(ooo)
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    event = prg.scale(ooo, (N,), None, abuf, abuf, np.float32(2))
    event.wait()
    out = np.empty(N, np.float32)
    cl.enqueue_copy(ooo, out, abuf)
    np.testing.assert_array_equal(out, np.full(N, 2, np.float32))


def test_non_blocking_read_completes_on_wait(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    out = np.zeros(N, np.float32)
    prg.scale(queue, (N,), None, abuf, abuf, np.float32(2))
    event = cl.enqueue_copy(queue, out, abuf, is_blocking=False)
    assert event._status == QUEUED
    event.wait()
    np.testing.assert_array_equal(out, a * 2)


def test_non_blocking_write_then_kernel(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    cl.enqueue_copy(queue, abuf, a, is_blocking=False)
    prg.scale(queue, (N,), None, abuf, bbuf, np.float32(-1))
    np.testing.assert_array_equal(read(queue, bbuf), -a)


def test_map_flushes(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    prg.scale(queue, (N,), None, abuf, abuf, np.float32(7))
    mapped, _ = cl.enqueue_map_buffer(queue, abuf, cl.map_flags.READ, 0, (N,), np.float32)
    np.testing.assert_array_equal(mapped, np.full(N, 7, np.float32))
    mapped.base.release()


def test_use_host_ptr_memory_is_not_delayed(ctx, prg, queue):
    host = np.ones(N, np.float32)
    hbuf = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)
    event = prg.scale(queue, (N,), None, hbuf, hbuf, np.float32(3))
    assert event._status == COMPLETE  # the host may read its array at any time
    np.testing.assert_array_equal(host, np.full(N, 3, np.float32))


def test_arguments_changed_between_launches(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    outs = [cl.Buffer(ctx, mf.READ_WRITE, N * 4) for _ in range(3)]
    kernel = prg.scale
    for factor, out in zip((1, 2, 3), outs):
        kernel.set_args(abuf, out, np.float32(factor))
        cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)
    for factor, out in zip((1, 2, 3), outs):
        np.testing.assert_array_equal(read(queue, out), a * factor)


def test_set_arg_after_enqueue_does_not_change_the_recorded_launch(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    other = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    kernel = prg.scale
    kernel.set_args(abuf, bbuf, np.float32(2))
    event = cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)
    kernel.set_arg(2, np.float32(100))
    kernel.set_arg(1, other)
    assert event._status == QUEUED
    np.testing.assert_array_equal(read(queue, bbuf), a * 2)


def test_buffer_released_while_recorded(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    tmp = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    out = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    prg.scale(queue, (N,), None, abuf, tmp, np.float32(2))
    prg.add(queue, (N,), None, tmp, abuf, out)
    tmp.release()  # still used by the recorded commands: its bytes stay until they ran
    with pytest.raises(cl.Error):
        prg.scale(queue, (N,), None, tmp, out, np.float32(1))
    np.testing.assert_array_equal(read(queue, out), a * 3)


def test_dead_task_is_eliminated_but_its_event_completes(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    tmp = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    dead = prg.scale(queue, (N,), None, abuf, tmp, np.float32(2))
    tmp.release()
    queue.finish()
    assert dead.command_execution_status == COMPLETE
    graph = cl.overlay.graph()
    assert isinstance(graph, TaskGraph)
    assert [n.status for n in graph.nodes] == ["dead"]
    assert any(note.startswith("eliminated scale") for note in graph.notes)


def test_a_released_buffer_read_through_its_sub_buffer_is_not_dead(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    parent = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    half = parent.get_sub_region(N * 2, N * 2)
    prg.scale(queue, (N,), None, abuf, parent, np.float32(2))
    parent.release()  # the sub-buffer keeps its bytes readable (OpenCL)
    queue.finish()
    assert [n.status for n in cl.overlay.graph().nodes] == ["run"]
    out = np.empty(N // 2, np.float32)
    cl.enqueue_copy(queue, out, half)
    np.testing.assert_array_equal(out, a[N // 2:] * 2)


def test_a_kernel_that_prints_is_never_dead(ctx, queue, capfd):
    prg = cl.Program(ctx, """
        void say(int i) { if (i == 3) printf("item %d\\n", i); }
        __kernel void noisy(__global float *b) { int i = get_global_id(0); say(i); b[i] = 1.0f; }
        __kernel void quiet(__global float *b) { int i = get_global_id(0); b[i] = 2.0f; }
    """).build()
    buf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    prg.noisy(queue, (N,), None, buf)
    prg.quiet(queue, (N,), None, buf)  # overwrites whole what noisy wrote
    np.testing.assert_array_equal(read(queue, buf), np.full(N, 2, np.float32))
    assert capfd.readouterr().out == "item 3\n"
    assert [n.status for n in cl.overlay.graph().nodes] == ["run", "run"]


def test_redundant_write_is_removed(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    bbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    cl.enqueue_copy(queue, abuf, a, is_blocking=False)
    prg.scale(queue, (N,), None, abuf, bbuf, np.float32(2))
    cl.enqueue_copy(queue, abuf, a, is_blocking=False)
    queue.finish()
    statuses = [n.status for n in cl.overlay.graph().nodes]
    assert statuses == ["run", "run", "redundant"]
    np.testing.assert_array_equal(read(queue, bbuf), a * 2)


def test_stencil_consumer_is_not_fused(ctx, prg, queue):
    a = np.random.default_rng(1).random(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    tmp = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    out = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    prg.scale(queue, (N,), None, abuf, tmp, np.float32(2))
    prg.blur(queue, (N,), None, tmp, out, np.int32(N))
    result = read(queue, out)
    assert not any(note.startswith("fused") for note in cl.overlay.graph().notes)
    padded = np.concatenate([[2 * a[0]], 2 * a, [2 * a[-1]]])
    np.testing.assert_allclose(result, (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-6)


def test_graph_writes_dot_before_and_after(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    tmp = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    out = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    prg.scale(queue, (N,), None, abuf, tmp, np.float32(2))
    prg.add(queue, (N,), None, tmp, abuf, out)
    read(queue, out)
    graph = cl.overlay.graph()
    assert 'n0 -> n1 [label="raw"]' in graph.before
    after = graph.to_dot()
    assert "scale+add" in after and "(fused)" in after


FAULT = """
__kernel void wild(__global float *x, long far)
{
    x[get_global_id(0) * far] = 1.0f;
}
"""


def test_a_faulting_launch_fails_its_event_and_the_later_ones(ctx, prg, queue):
    if ctx.devices[0].type & cl.device_type.GPU:
        pytest.skip("a fault on a GPU ends its context for the process (the CUDA driver's "
                    "rule), so no later command could run; the CPU devices contain it")
    wild = cl.Program(ctx, FAULT).build()
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    other = buffer_of(ctx, np.ones(N, np.float32))
    fault = wild.wild(queue, (64,), (8,), buf, np.int64(1 << 40))  # reported through events
    after = prg.scale(queue, (N,), None, other, other, np.float32(2))
    with pytest.raises(cl.Error, match="EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"):
        after.wait()
    assert fault.command_execution_status == cl.status_code.OUT_OF_RESOURCES
    assert after.command_execution_status == cl.status_code.EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    np.testing.assert_array_equal(read(queue, other), np.ones(N, np.float32))  # it goes on


def test_profiling_times_of_recorded_events(ctx, prg):
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    cl.overlay.enable(q)
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    first = prg.scale(q, (N,), None, abuf, abuf, np.float32(2))
    second = prg.scale(q, (N,), None, abuf, abuf, np.float32(3))
    assert first.profile.end >= first.profile.start >= first.profile.queued  # replays
    assert second.profile.start >= first.profile.end


def test_redundant_read_and_fill_overwriting_a_write(ctx, prg, queue):
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    out = np.zeros(N, np.float32)
    cl.enqueue_copy(queue, out, abuf, is_blocking=False)
    cl.enqueue_copy(queue, out, abuf, is_blocking=False)
    cl.enqueue_copy(queue, abuf, a * 5, is_blocking=False)  # overwritten whole by the fill
    cl.enqueue_fill_buffer(queue, abuf, np.float32(7), 0, N * 4)
    queue.finish()
    statuses = [n.status for n in cl.overlay.graph().nodes]
    assert statuses == ["run", "redundant", "dead", "run"]
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(read(queue, abuf), np.full(N, 7, np.float32))


def test_debug_names_every_decision(ctx, prg, capfd):
    from ppcl.overlay.recorder import Recorder

    q = cl.CommandQueue(ctx)
    q._overlay = Recorder(q, True, lambda graph: None)  # as PPCL_DEBUG=overlay makes it
    n = 111  # a graph no other test made: decisions are printed when its plan is made
    abuf = buffer_of(ctx, np.ones(n, np.float32))
    tmp = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    out = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    prg.scale(q, (n,), None, abuf, tmp, np.float32(4))
    prg.add(q, (n,), None, tmp, abuf, out)
    tmp.release()
    np.testing.assert_array_equal(read(q, out, n), np.full(n, 5, np.float32))
    err = capfd.readouterr().err
    assert "overlay: fused scale #0 with add #1, vertical" in err
    assert "overlay: dropped the store of buffer 1" in err and "released" in err


def test_another_queue_waiting_on_a_recorded_event(ctx, prg, queue):
    abuf = buffer_of(ctx, np.ones(N, np.float32))
    recorded = prg.scale(queue, (N,), None, abuf, abuf, np.float32(3))
    other = cl.CommandQueue(ctx)
    after = prg.scale(other, (N,), None, abuf, abuf, np.float32(2), wait_for=[recorded])
    after.wait()
    assert recorded.command_execution_status == COMPLETE
    out = np.empty(N, np.float32)
    cl.enqueue_copy(other, out, abuf)
    np.testing.assert_array_equal(out, np.full(N, 6, np.float32))


def test_a_stream_that_gains_nothing_passes_then_records_a_fusible_pattern(ctx, prg, queue):
    from ppcl.overlay.recorder import NO_GAIN_TO_PASS, PASS_COMMANDS

    plain = cl.CommandQueue(ctx)
    a = np.linspace(0.5, 1.5, N, dtype=np.float32)
    bufs = {q: (buffer_of(ctx, a), cl.Buffer(ctx, mf.READ_WRITE, N * 4)) for q in (plain, queue)}
    results: dict[cl.CommandQueue, list[np.ndarray]] = {plain: [], queue: []}
    for q, (abuf, bbuf) in bufs.items():
        for k in range(NO_GAIN_TO_PASS):  # each launch read at once: one command a replay
            event = prg.scale(q, (N,), None, abuf, bbuf, np.float32(k + 2))
            assert event._status == (QUEUED if q is queue else COMPLETE)
            results[q].append(read(q, bbuf))
        # from now on the overlay's queue runs each command at once, as the plain one does
        event = prg.scale(q, (N,), None, bbuf, abuf, np.float32(0.5))
        assert event._status == COMPLETE
        seen: list[int] = []
        event.set_callback(COMPLETE, seen.append)
        assert seen == [COMPLETE]
        results[q].append(read(q, abuf))
        for _ in range(PASS_COMMANDS):  # more than pass: the overlay records again
            prg.scale(q, (N,), None, abuf, bbuf, np.float32(1.25))
        # a fusible pattern: recorded, then replayed fused
        cbuf = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
        prg.scale(q, (N,), None, abuf, bbuf, np.float32(3))
        last = prg.add(q, (N,), None, abuf, bbuf, cbuf)
        assert last._status == (QUEUED if q is queue else COMPLETE)
        results[q].append(read(q, cbuf))
        assert last.command_execution_status == COMPLETE
    assert any(note.startswith("fused scale") for note in cl.overlay.graph().notes)
    for got, expected in zip(results[queue], results[plain], strict=True):
        np.testing.assert_array_equal(got, expected)


def test_replays_run_as_recorded_let_the_next_commands_pass(ctx, prg, queue):
    """A write and a launch with nothing to fuse, remove or specialize, read at once: after a
    few replays the commands run as they are enqueued, with the same results."""
    from ppcl.overlay.recorder import NO_GAIN_TO_PASS

    plain = cl.CommandQueue(ctx)
    rng = np.random.default_rng(3)
    hosts = [rng.random(N, dtype=np.float32) for _ in range(NO_GAIN_TO_PASS + 2)]
    for q in (plain, queue):
        abuf, bbuf, cbuf = (cl.Buffer(ctx, mf.READ_WRITE, N * 4) for _ in range(3))
        cl.enqueue_copy(q, bbuf, np.ones(N, np.float32))
        outs = []
        for k, host in enumerate(hosts):
            write = cl.enqueue_copy(q, abuf, host, is_blocking=False)
            launch = prg.add(q, (N,), None, abuf, bbuf, cbuf)
            recorded = q is queue and k < NO_GAIN_TO_PASS
            assert launch._status == (QUEUED if recorded else COMPLETE)
            outs.append(read(q, cbuf))
            assert write.command_execution_status == COMPLETE
        if q is plain:
            expected = outs
    for got, want, host in zip(outs, expected, hosts, strict=True):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, host + 1)


def test_disable_while_passing_leaves_a_plain_queue(ctx, prg, queue):
    from ppcl.overlay.recorder import NO_GAIN_TO_PASS

    abuf = buffer_of(ctx, np.ones(N, np.float32))
    for _ in range(NO_GAIN_TO_PASS):
        prg.scale(queue, (N,), None, abuf, abuf, np.float32(2))
        read(queue, abuf)
    cl.overlay.disable(queue)
    cl.overlay.enable(queue)  # records from the first command again
    event = prg.scale(queue, (N,), None, abuf, abuf, np.float32(2))
    assert event._status == QUEUED
    np.testing.assert_array_equal(read(queue, abuf), np.full(N, 2 ** (NO_GAIN_TO_PASS + 1),
                                                             np.float32))


def test_a_lone_command_nothing_could_change_replays_without_planning(ctx, prg, queue,
                                                                      monkeypatch):
    """A launch with no scalar argument recorded alone, its buffers alive: its plan can only be
    itself, so the replay runs it without a plan look-up; its event completes with times."""
    from ppcl.overlay.recorder import Recorder

    def no_planning(self, commands):
        raise AssertionError("planned a lone command nothing could change")

    monkeypatch.setattr(Recorder, "_plan", no_planning)
    a = np.arange(N, dtype=np.float32)
    abuf, bbuf = buffer_of(ctx, a), buffer_of(ctx, a)
    out = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    event = prg.add(queue, (N,), None, abuf, bbuf, out)
    assert event._status == QUEUED
    np.testing.assert_array_equal(read(queue, out), 2 * a)
    assert event.command_execution_status == COMPLETE
    assert cl.overlay.graph().nodes[0].label == "add"
    assert any("run as recorded" in note for note in cl.overlay.graph().notes)


@pytest.mark.parametrize("why", ["released output", "scalar argument"])
def test_a_lone_command_an_optimization_could_change_is_planned(ctx, prg, queue, why):
    """Alone, a launch writing only a released buffer is dead, and one with a scalar argument
    may be specialized: both are planned."""
    a = np.arange(N, dtype=np.float32)
    abuf = buffer_of(ctx, a)
    out = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    if why == "released output":
        event = prg.add(queue, (N,), None, abuf, abuf, out)
        out.release()
        queue.finish()
        assert [n.status for n in cl.overlay.graph().nodes] == ["dead"]
    else:
        event = prg.scale(queue, (N,), None, abuf, out, np.float32(2))
        np.testing.assert_array_equal(read(queue, out), 2 * a)
        assert not any("run as recorded" in note for note in cl.overlay.graph().notes)
    assert event.command_execution_status == COMPLETE
