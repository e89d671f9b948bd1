"""Events, profiling, user events, callbacks, markers, out-of-order queues and threads."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import ppcl as cl

mf = cl.mem_flags
COMPLETE = cl.command_execution_status.COMPLETE

SOURCE = """
__kernel void add_one(__global int *x)
{
    x[get_global_id(0)] += 1;
}

__kernel void spin(__global float *x, int rounds)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int r = 0; r < rounds; r++) v = v * 0.999f + 0.001f;
    x[i] = v;
}
"""


@pytest.fixture(scope="module")
def prg(ctx):
    return cl.Program(ctx, SOURCE).build()


def test_profiling_timestamps_are_ordered(ctx, prg):
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 1024 * 4)
    cl.enqueue_fill_buffer(queue, buf, np.float32(1), 0, buf.size)
    event = prg.spin(queue, (1024,), None, buf, np.int32(100))
    event.wait()
    p = event.profile
    assert 0 < p.queued <= p.submit <= p.start <= p.end
    assert event.get_profiling_info(cl.profiling_info.END) == p.end
    gate = cl.UserEvent(ctx)
    held = prg.spin(queue, (1024,), None, buf, np.int32(1), wait_for=[gate])
    assert held.command_execution_status != COMPLETE
    gate.set_status(COMPLETE)
    held.wait()
    assert held.profile.queued <= held.profile.submit <= held.profile.start <= held.profile.end
    assert held.profile.start >= event.profile.end


def test_profile_complete_and_user_events(ctx, prg):
    """``event.profile.complete`` (CL_PROFILING_COMMAND_COMPLETE) is there as in PyOpenCL
    (it raised AttributeError); a user event says it has no profiling info because it runs
    on no queue, not that a queue lacks PROFILING_ENABLE."""
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    event = cl.enqueue_marker(queue)
    event.wait()
    assert event.profile.complete >= event.profile.end >= event.profile.start
    assert event.get_profiling_info(cl.profiling_info.COMPLETE) == event.profile.complete
    user = cl.UserEvent(ctx)
    user.set_status(COMPLETE)
    with pytest.raises(cl.RuntimeError, match="PROFILING_INFO_NOT_AVAILABLE - a user event"):
        user.profile.start  # noqa: B018


def test_profiling_needs_the_queue_property(ctx, prg):
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    # a launch run at once on a queue without profiling takes no times at all
    for event in (cl.enqueue_marker(queue), prg.add_one(queue, (64,), None, buf)):
        event.wait()
        with pytest.raises(cl.RuntimeError, match="PROFILING_INFO_NOT_AVAILABLE"):
            event.profile.start  # noqa: B018


def test_a_launch_run_at_once_is_queued_submitted_and_started_together(ctx, prg):
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    event = prg.add_one(queue, (64,), None, buf)
    assert event.command_execution_status == COMPLETE
    p = event.profile
    assert 0 < p.queued == p.submit == p.start <= p.end


def test_transfers_run_at_once_are_queued_submitted_and_started_together(ctx):
    """Reads, writes, fills and copies with nothing before them run at once in the enqueuing
    thread, as launches do: each event completes with its command's type, queued, submitted
    and started at one moment; one given a wait list, even an empty one, is the same."""
    ct = cl.command_type
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    first = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4)
    second = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4)
    data = np.arange(16, dtype=np.int32)
    out = np.empty_like(data)
    events = [
        (cl.enqueue_copy(queue, first, data), ct.WRITE_BUFFER),
        (cl.enqueue_copy(queue, second, first, wait_for=[]), ct.COPY_BUFFER),
        (cl.enqueue_fill_buffer(queue, first, np.int32(7), 0, 8 * 4), ct.FILL_BUFFER),
        (cl.enqueue_copy(queue, out[8:], first, device_offset=8 * 4), ct.READ_BUFFER),
        (cl.enqueue_copy(queue, out[:8], second, is_blocking=False), ct.READ_BUFFER),
    ]
    for event, kind in events:
        assert event.command_type == kind
        assert event.command_execution_status == COMPLETE
        p = event.profile
        assert 0 < p.queued == p.submit == p.start <= p.end
    np.testing.assert_array_equal(out, np.r_[data[:8], data[8:]])
    cl.enqueue_copy(queue, out, first)
    np.testing.assert_array_equal(out, np.r_[np.full(8, 7), data[8:]])


def test_commands_enqueued_while_a_launch_runs_at_once_in_another_thread_wait_for_it(ctx, prg):
    """The event of a launch run at once in the enqueuing thread is the queue's latest
    command while it runs: a command another thread enqueues meanwhile is held behind it, its
    callbacks run and ``finish`` in a third thread returns once it completes."""
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    kernel = prg.add_one
    kernel(queue, (64,), None, buf).wait()
    launch = next(launch for key, launch in kernel._launches.items() if key[0] == (64,))
    device_run = launch.run
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow_run(args):
        started.set()
        assert release.wait(timeout=30)
        device_run(args)
        order.append("launch")

    launch.run = slow_run
    try:
        launcher = threading.Thread(target=kernel, args=(queue, (64,), None, buf))
        launcher.start()
        assert started.wait(timeout=30)
    finally:
        launch.run = device_run  # the launch in flight runs slow_run still
    marker = cl.enqueue_marker(queue)
    statuses: list[int] = []
    marker.set_callback(COMPLETE, lambda status: (order.append("marker"), statuses.append(status)))
    finisher = threading.Thread(target=queue.finish)
    finisher.start()
    assert marker.command_execution_status != COMPLETE
    release.set()
    launcher.join(timeout=30)
    finisher.join(timeout=30)
    assert not finisher.is_alive()
    marker.wait()
    assert order == ["launch", "marker"] and statuses == [COMPLETE]
    out = np.empty(64, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert (out != 0).all()


def test_event_info(ctx, prg):
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    event = cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, buf.size)
    assert event.command_type == cl.command_type.FILL_BUFFER
    assert event.get_info(cl.event_info.COMMAND_QUEUE) is queue
    assert event.get_info(cl.event_info.COMMAND_EXECUTION_STATUS) == COMPLETE
    cl.wait_for_events([event])


def test_user_event_holds_an_in_order_queue(ctx, prg):
    queue = cl.CommandQueue(ctx)
    data = np.zeros(16, np.int32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    gate = cl.UserEvent(ctx)
    assert gate.command_execution_status == cl.command_execution_status.SUBMITTED
    first = prg.add_one(queue, (16,), None, buf, wait_for=[gate])
    second = prg.add_one(queue, (16,), None, buf)  # in order: behind the held one
    out = np.empty_like(data)
    read = cl.enqueue_copy(queue, out, buf, is_blocking=False)
    assert first.command_execution_status != COMPLETE
    assert second.command_execution_status != COMPLETE
    gate.set_status(COMPLETE)
    read.wait()
    assert (out == 2).all()
    queue.finish()
    with pytest.raises(cl.LogicError):
        gate.set_status(COMPLETE)


def test_failed_user_event_fails_dependents(ctx, prg):
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4)
    gate = cl.UserEvent(ctx)
    event = prg.add_one(queue, (16,), None, buf, wait_for=[gate])
    gate.set_status(-1)
    with pytest.raises(cl.Error, match="EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"):
        event.wait()
    assert event.command_execution_status < 0
    queue.finish()


@pytest.mark.parametrize("properties", [0, cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE])
def test_a_long_chain_behind_a_failed_user_event_fails_without_recursing(ctx, properties):
    # each failed command failed its dependent from inside its own completion: 3000 commands
    # raised a RecursionError out of set_status and left the rest of the chain pending forever
    queue = cl.CommandQueue(ctx, properties=properties)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    gate = cl.UserEvent(ctx)
    events, last = [], gate
    for i in range(3000):
        last = cl.enqueue_fill_buffer(queue, buf, np.int32(i), 0, buf.size, wait_for=[last])
        events.append(last)
    gate.set_status(-2)
    with pytest.raises(cl.Error, match="EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"):
        events[-1].wait()
    queue.finish()
    failed = cl.status_code.EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert {e.command_execution_status for e in events} == {failed}


def test_callbacks(ctx, prg):
    queue = cl.CommandQueue(ctx)
    seen: list[tuple[str, int]] = []
    done = threading.Event()
    gate = cl.UserEvent(ctx)
    marker = cl.enqueue_marker(queue, wait_for=[gate])
    marker.set_callback(COMPLETE, lambda status: (seen.append(("marker", status)), done.set()))
    gate.set_callback(COMPLETE, lambda status: seen.append(("gate", status)))
    assert seen == []
    gate.set_status(COMPLETE)
    assert done.wait(10)
    assert ("gate", COMPLETE) in seen and ("marker", COMPLETE) in seen
    late: list[int] = []
    marker.set_callback(COMPLETE, late.append)  # already complete: called at once
    assert late == [COMPLETE]


def test_a_callback_gets_the_status_it_was_registered_for_or_the_error(ctx):
    # as clSetEventCallback says; a RUNNING callback of a user event, or one registered after
    # the event completed, got COMPLETE
    statuses = cl.command_execution_status
    queue = cl.CommandQueue(ctx)
    kinds = (statuses.SUBMITTED, statuses.RUNNING, statuses.COMPLETE)
    for final in (COMPLETE, -7):
        seen: dict[str, list[int]] = {"gate": [], "marker": []}
        gate = cl.UserEvent(ctx)
        marker = cl.enqueue_marker(queue, wait_for=[gate])
        for kind in kinds:
            gate.set_callback(kind, seen["gate"].append)
        gate.set_status(final)
        with pytest.raises(cl.Error) if final < 0 else contextlib.nullcontext():
            marker.wait()
        for kind in kinds:
            marker.set_callback(kind, seen["marker"].append)
        failed = cl.status_code.EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        if final == COMPLETE:
            assert seen == {"gate": list(kinds), "marker": list(kinds)}
        else:  # a user event is SUBMITTED from its creation
            assert seen == {"gate": [statuses.SUBMITTED, final, final],
                            "marker": [failed, failed, failed]}


def test_callbacks_on_every_command_thread_may_wait_for_more_commands(ctx, prg):
    # a callback runs on the command thread that completed its command; when every such
    # thread waited in a callback for a command it had enqueued, no thread was left to run
    # those commands, and the program hung
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    count = queue.device.backend.executor.threads + 2
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(16, i, np.int32))
            for i in range(count)]
    gate = cl.UserEvent(ctx)
    read: dict[int, int] = {}
    done = threading.Semaphore(0)

    def read_back(index: int) -> None:
        out = np.empty(16, np.int32)
        cl.enqueue_copy(queue, out, bufs[index])  # blocking
        read[index] = int(out[0])
        done.release()

    for index, buf in enumerate(bufs):
        event = prg.add_one(queue, (16,), None, buf, wait_for=[gate])
        event.set_callback(COMPLETE, lambda _status, index=index: read_back(index))
    gate.set_status(COMPLETE)
    assert all(done.acquire(timeout=60) for _ in bufs)  # a guard against hanging, not a time
    assert read == {i: i + 1 for i in range(count)}
    queue.finish()


def test_out_of_order_queue_respects_wait_for(ctx, prg):
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    data = np.zeros(256, np.int32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    gate = cl.UserEvent(ctx)
    e1 = prg.add_one(queue, (256,), None, buf, wait_for=[gate])
    e2 = prg.add_one(queue, (256,), None, buf, wait_for=[e1])
    e3 = prg.add_one(queue, (256,), None, buf, wait_for=[e2])
    other = cl.Buffer(ctx, mf.READ_WRITE, 256 * 4)
    independent = cl.enqueue_fill_buffer(queue, other, np.int32(5), 0, other.size)
    independent.wait()  # runs although the chain is held
    assert e1.command_execution_status != COMPLETE
    gate.set_status(COMPLETE)
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, buf, wait_for=[e3])
    assert (out == 3).all()
    queue.finish()


def test_out_of_order_barrier_and_marker(ctx, prg):
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    bufs = [cl.Buffer(ctx, mf.READ_WRITE, 1024 * 4) for _ in range(4)]
    gate = cl.UserEvent(ctx)
    events = [cl.enqueue_fill_buffer(queue, b, np.float32(1), 0, b.size, wait_for=[gate])
              for b in bufs]
    marker = cl.enqueue_marker(queue)
    barrier = cl.enqueue_barrier(queue)
    after = prg.spin(queue, (1024,), None, bufs[0], np.int32(1))
    assert marker.command_execution_status != COMPLETE
    assert after.command_execution_status != COMPLETE
    gate.set_status(COMPLETE)
    after.wait()
    assert all(e.command_execution_status == COMPLETE for e in events)
    assert marker.command_execution_status == COMPLETE
    assert barrier.command_execution_status == COMPLETE
    queue.finish()


def test_out_of_order_runs_independent_kernels_concurrently(ctx, prg):
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ones(4096, np.float32))
            for _ in range(4)]
    events = [prg.spin(queue, (4096,), None, b, np.int32(50)) for b in bufs]
    cl.wait_for_events(events)
    queue.finish()
    expected = np.ones(4096, np.float32)
    for _ in range(50):
        expected = expected * np.float32(0.999) + np.float32(0.001)
    out = np.empty(4096, np.float32)
    for b in bufs:
        cl.enqueue_copy(queue, out, b)
        np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_blocking_read_waits_for_held_commands(ctx, prg):
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(8, np.int32))
    gate = cl.UserEvent(ctx)
    prg.add_one(queue, (8,), None, buf, wait_for=[gate])
    threading.Timer(0.05, gate.set_status, args=(COMPLETE,)).start()
    out = np.empty(8, np.int32)
    cl.enqueue_copy(queue, out, buf)  # blocking by default
    assert (out == 1).all()


def test_threads_enqueueing_into_their_own_queues(ctx, prg):
    errors: list[BaseException] = []
    results: dict[int, np.ndarray] = {}

    def worker(index: int) -> None:
        try:
            queue = cl.CommandQueue(ctx)
            data = np.full(512, index, np.int32)
            buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
            knl = prg.add_one
            for _ in range(20):
                knl(queue, (512,), None, buf)
            out = np.empty_like(data)
            cl.enqueue_copy(queue, out, buf)
            queue.finish()
            results[index] = out
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for index, out in results.items():
        assert (out == index + 20).all()
    assert len(results) == 6


def test_one_in_order_queue_shared_by_threads_keeps_order(ctx, prg):
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(64, np.int32))

    def worker() -> None:
        knl = prg.add_one
        for _ in range(25):
            knl(queue, (64,), None, buf)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.finish()
    out = np.empty(64, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 100).all()


def _raise(status: int) -> None:
    raise ValueError("callback bug")


def test_a_callback_that_raises_neither_hangs_the_queue_nor_reaches_the_enqueuer(ctx, prg):
    # the exception once escaped the thread completing the event before its waiters were
    # woken: queue.finish() waited forever
    queue = cl.CommandQueue(ctx)
    gate = cl.UserEvent(ctx)
    marker = cl.enqueue_marker(queue, wait_for=[gate])
    marker.set_callback(COMPLETE, _raise)
    with pytest.warns(RuntimeWarning, match="callback bug"):
        gate.set_status(COMPLETE)
        queue.finish()
    assert marker.command_execution_status == COMPLETE
    with pytest.warns(RuntimeWarning, match="callback bug"):
        marker.set_callback(COMPLETE, _raise)  # already complete: called at once
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        marker.set_callback(12345, print)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        marker.set_callback(COMPLETE, None)


@pytest.mark.parametrize("enqueue", [cl.enqueue_marker, cl.enqueue_barrier])
def test_markers_and_barriers_check_their_queue(ctx, enqueue):
    for not_a_queue in (None, ctx):  # an AttributeError on '_enqueue'
        with pytest.raises(cl.LogicError, match="CL_INVALID_COMMAND_QUEUE - .* is not a "):
            enqueue(not_a_queue)


def _interrupt(status: int) -> None:
    raise KeyboardInterrupt


def test_a_callback_raising_keyboard_interrupt_on_a_command_thread_is_ignored(ctx):
    # it ended the command thread before the event's waiters were woken: wait() hung
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    gate = cl.UserEvent(ctx)
    fill = cl.enqueue_fill_buffer(queue, buf, np.int32(5), 0, buf.size, wait_for=[gate])
    fill.set_callback(COMPLETE, _interrupt)
    finished = threading.Event()
    with pytest.warns(RuntimeWarning, match="KeyboardInterrupt"):
        gate.set_status(COMPLETE)
        waiter = threading.Thread(target=lambda: (fill.wait(), finished.set()), daemon=True)
        waiter.start()
        waiter.join(60)  # a guard against hanging, not a time
    assert finished.is_set()
    out = np.empty(16, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 5).all()


def test_finish_waits_for_the_commands_before_it_not_those_callbacks_keep_enqueuing(ctx):
    # finish waited until no command was pending: a callback enqueuing the next command as
    # each one runs kept it waiting forever (clFinish waits for the commands enqueued before)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    stop = threading.Event()
    enqueued = []

    def gated_fill() -> tuple[cl.Event, cl.UserEvent]:
        # held until its gate opens, so its callback is set before it can run
        gate = cl.UserEvent(ctx)
        event = cl.enqueue_fill_buffer(queue, buf, np.int32(len(enqueued)), 0, buf.size,
                                       wait_for=[gate])
        event.set_callback(cl.command_execution_status.RUNNING, again)
        return event, gate

    def again(status: int) -> None:
        if not stop.is_set():  # the next one is pending before this one completes
            event, gate = gated_fill()
            enqueued.append(event)
            gate.set_status(COMPLETE)

    first, gate = gated_fill()
    gate.set_status(COMPLETE)
    finished = threading.Event()
    waiter = threading.Thread(target=lambda: (queue.finish(), finished.set()), daemon=True)
    waiter.start()
    waiter.join(60)  # a guard against hanging, not a time
    returned_while_enqueuing = finished.is_set()
    stop.set()
    waiter.join()
    queue.finish()
    assert returned_while_enqueuing
    assert first.command_execution_status == COMPLETE
    assert enqueued


def test_wait_for_events_checks_its_list(ctx):
    other = cl.Context(ctx.devices)
    with pytest.raises(cl.LogicError, match="CL_INVALID_EVENT"):
        cl.wait_for_events([5])
    with pytest.raises(cl.LogicError, match="CL_INVALID_CONTEXT"):
        cl.wait_for_events([cl.UserEvent(ctx), cl.UserEvent(other)])
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):  # as clWaitForEvents, pyopencl
        cl.wait_for_events([])


def test_user_events_check_their_context_and_status(ctx):
    with pytest.raises(cl.LogicError, match="CL_INVALID_CONTEXT"):
        cl.UserEvent(None)  # was a user event without a context
    event = cl.UserEvent(ctx)
    for status in ("done", 0.0):  # a str was a TypeError, 0.0 was kept as the status
        with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
            event.set_status(status)
    event.set_status(np.int32(COMPLETE))
    assert event.command_execution_status == COMPLETE
