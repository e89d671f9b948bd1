"""Rough performance figures of a device, as ``pyopencl.characterize.performance`` gives them.

Programs that print a device's command latency, transfer bandwidths or add rate (PyOpenCL's
``dump-performance`` example) import this module. Every figure is a wall-clock time per call,
found by repeating the call until the repetitions take ``desired_duration`` seconds; a
``timer_factory`` may replace the wall clock (a class taking the queue, with ``start``,
``stop``, ``add_event`` and ``get_elapsed``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import ppcl as cl


class Timer:
    """The interface of a timer: ``start``, ``add_event`` for each call's event, ``stop``,
    then ``get_elapsed`` in seconds."""

    def __init__(self, queue: cl.CommandQueue) -> None:
        self.queue = queue

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def add_event(self, event: Any) -> None:
        pass

    def get_elapsed(self) -> float:
        return 0.0


class WallTimer(Timer):
    """Wall-clock time between two finished queues."""

    def start(self) -> None:
        self.queue.finish()
        self.started = time.perf_counter()

    def stop(self) -> None:
        self.queue.finish()
        self.stopped = time.perf_counter()

    def get_elapsed(self) -> float:
        return self.stopped - self.started


def _get_time(queue: cl.CommandQueue, call: Callable[[], Any],
              timer_factory: Callable[[cl.CommandQueue], Timer] | None = None,
              desired_duration: float = 0.1, warmup_rounds: int = 3) -> float:
    """Seconds per ``call()``: the count of calls grows (2x to 10x a round) until one round
    of them lasts ``desired_duration``."""
    make_timer = timer_factory or WallTimer
    for _ in range(warmup_rounds):
        call()
    count = 1
    while True:
        timer = make_timer(queue)
        timer.start()
        for _ in range(count):
            timer.add_event(call())
        timer.stop()
        elapsed = timer.get_elapsed()
        if elapsed >= desired_duration:
            return elapsed / count
        wanted = 5 * count if elapsed == 0 else int(desired_duration / elapsed)
        count = min(10 * count, max(2 * count, wanted))


class HostDeviceTransferBase:
    """A host array and a device buffer of ``block_size`` bytes."""

    def __init__(self, queue: cl.CommandQueue, block_size: int) -> None:
        self.queue = queue
        self.host_buf = np.empty(block_size, dtype=np.uint8)
        self.dev_buf = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, block_size)


class HostToDeviceTransfer(HostDeviceTransferBase):
    def do(self) -> cl.Event:
        return cl.enqueue_copy(self.queue, self.dev_buf, self.host_buf)


class DeviceToHostTransfer(HostDeviceTransferBase):
    def do(self) -> cl.Event:
        return cl.enqueue_copy(self.queue, self.host_buf, self.dev_buf)


class DeviceToDeviceTransfer:
    """Two device buffers of ``block_size`` bytes."""

    def __init__(self, queue: cl.CommandQueue, block_size: int) -> None:
        self.queue = queue
        self.dev_buf_1 = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, block_size)
        self.dev_buf_2 = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, block_size)

    def do(self) -> cl.Event:
        return cl.enqueue_copy(self.queue, self.dev_buf_2, self.dev_buf_1)


def transfer_latency(queue: cl.CommandQueue, transfer_type: Any,
                     timer_factory: Any = None) -> float:
    """Seconds for a one-byte transfer of ``transfer_type``."""
    transfer = transfer_type(queue, 1)
    return _get_time(queue, transfer.do, timer_factory=timer_factory)


def transfer_bandwidth(queue: cl.CommandQueue, transfer_type: Any, block_size: int,
                       timer_factory: Any = None) -> float:
    """Bytes per second moved by transfers of ``block_size`` bytes (one direction)."""
    transfer = transfer_type(queue, block_size)
    return block_size / _get_time(queue, transfer.do, timer_factory=timer_factory)


def get_profiling_overhead(ctx: cl.Context, timer_factory: Any = None) -> tuple[float, float]:
    """(what profiling adds to a command, the command's latency with profiling), seconds."""
    times = []
    for properties in (0, cl.command_queue_properties.PROFILING_ENABLE):
        queue = cl.CommandQueue(ctx, properties=properties)
        transfer = DeviceToDeviceTransfer(queue, 1)
        times.append(_get_time(queue, transfer.do, timer_factory=timer_factory))
    return times[1] - times[0], times[1]


def get_empty_kernel_time(queue: cl.CommandQueue, timer_factory: Any = None) -> float:
    """Seconds for the launch of a kernel with one work-item that does nothing."""
    kernel = cl.Program(queue.context, "kernel void empty(void) { }").build().empty
    return _get_time(queue, lambda: kernel(queue, (1,), None), timer_factory=timer_factory)


_ADDS_PER_ITEM = 500
_ADD_SOURCE = """
typedef %(op_t)s op_t;
kernel void benchmark(void)
{
    local op_t sink[1024];
    op_t val = get_global_id(0);
    for (int i = 0; i < %(rounds)d; ++i) {
%(adds)s
    }
    sink[get_local_id(0) %% 1024] = val;
}
"""


def _full_machine_rate(queue: cl.CommandQueue, source: str, timer_factory: Any) -> float:
    """Work-items per second of the kernel ``benchmark``, at the global size (doubled from
    4 per compute unit) where the rate stops growing."""
    kernel = cl.Program(queue.context, source).build().benchmark
    global_size = 4 * queue.device.max_compute_units
    best = 0.0
    dips = 0
    while True:
        launch = functools.partial(kernel, queue, (global_size,), None)
        seconds = _get_time(queue, launch, timer_factory=timer_factory)
        rate = global_size / seconds
        if rate > 1.05 * best:
            dips = 0
        elif rate < 0.9 * best and dips < 3:
            dips += 1
        else:
            return max(best, rate)
        best = max(best, rate)
        global_size *= 2


def get_add_rate(queue: cl.CommandQueue, type: str = "float",  # noqa: A002 - PyOpenCL's name
                 timer_factory: Any = None) -> float:
    """Additions of ``type`` per second over the whole device."""
    rounds = 10
    adds = "\n".join(["        val += val;"] * (_ADDS_PER_ITEM // rounds))
    source = _ADD_SOURCE % {"op_t": type, "rounds": rounds, "adds": adds}
    return _ADDS_PER_ITEM * _full_machine_rate(queue, source, timer_factory)
