"""Command queues: in-order and out-of-order execution of commands, with events.

An in-order queue runs a command synchronously in the enqueuing thread when nothing it must wait
for is pending: that is the lowest latency there is, and it is allowed, since a non-blocking
command may complete before its enqueue call returns. A command that has to wait (for a user
event, or for an earlier command still pending) is held and handed to the device's command
threads once its last dependency completes; later commands of an in-order queue then chain
behind it. An out-of-order queue hands every ready command to the command threads, so
independent commands run concurrently; ``wait_for`` and barriers order them.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ppcl.runtime.constants import (
    command_queue_info,
    command_queue_properties,
    command_type,
    info_attributes,
)
from ppcl.runtime.context import Context
from ppcl.runtime.errors import ERROR_CODES, Error, KernelCheckError, integer_arg, make_error
from ppcl.runtime.event import COMPLETE, RUNNING, SUBMITTED, Event, running_event
from ppcl.runtime.handles import Handle
from ppcl.runtime.memory import Kept

if TYPE_CHECKING:
    from ppcl.runtime.memory import MemoryObject
    from ppcl.runtime.platform import Device

Action = Callable[[], None]
# called with each new queue; the overlay (``ppcl/overlay``) installs one when PPCL_OVERLAY=1
queue_hooks: list[Callable[[CommandQueue], object]] = []
_OUT_OF_RESOURCES = ERROR_CODES["OUT_OF_RESOURCES"]
_WAIT_LIST_ERROR = ERROR_CODES["EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"]
_LAUNCH = command_type.NDRANGE_KERNEL
_now = time.perf_counter_ns


@dataclass(frozen=True)
class KernelTask:
    """A kernel launch as an overlay sees it: the kernel, its argument values taken at enqueue
    and the device's launch of its NDRange."""

    kernel: Any
    args: tuple[Any, ...]
    launch: Any


@dataclass(frozen=True)
class TransferTask:
    """A buffer command as an overlay sees it: the ``(buffer, offset, size)`` ranges it reads
    and writes, and the host array it reads from or writes to (None for none)."""

    reads: tuple[tuple[MemoryObject, int, int], ...]
    writes: tuple[tuple[MemoryObject, int, int], ...]
    host: Any = None


class _HeldCommand:
    """A command waiting for ``remaining`` events before it is handed to a command thread."""

    def __init__(self, queue: CommandQueue, event: Event, action: Action, remaining: int) -> None:
        self.queue = queue
        self.event = event
        self.action = action
        self.remaining = remaining
        self.failed = False
        self.lock = threading.Lock()

    def dependency_done(self, status: int) -> None:
        with self.lock:
            self.remaining -= 1
            self.failed = self.failed or status < COMPLETE
            ready = self.remaining == 0
        if ready:
            self.queue._submit(self)


class CommandQueueUsedAfterExit(UserWarning):
    """A command queue used after the ``with`` block it was made in (PyOpenCL's warning)."""


_USES = ("_enqueue", "_run_direct", "finish", "flush")  # every command goes through the first two


def _warning_after_exit(use: Callable[..., Any]) -> Callable[..., Any]:
    def warn_then_use(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("command queue used after the exit of its with block",
                      CommandQueueUsedAfterExit, stacklevel=3)
        return use(*args, **kwargs)
    return warn_then_use


@info_attributes(command_queue_info, own=("context", "device", "properties"))
class CommandQueue(Handle):
    """A queue of commands for one device of a context."""

    def __init__(self, context: Context, device: Device | None = None,
                 properties: int | None = 0) -> None:
        if not isinstance(context, Context):
            raise make_error("clCreateCommandQueue", "INVALID_CONTEXT",
                             f"{context!r} is not a Context")
        properties = integer_arg("clCreateCommandQueue", properties or 0, "queue properties")
        known = (command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
                 | command_queue_properties.PROFILING_ENABLE)
        if properties & ~known:
            raise make_error("clCreateCommandQueue", "INVALID_QUEUE_PROPERTIES",
                             f"unsupported properties {properties:#x}")
        if device is None:
            device = context.devices[0]
        elif device not in context.devices:
            raise make_error("clCreateCommandQueue", "INVALID_DEVICE",
                             "the device is not in the context")
        self.context = context
        self.device = device
        self.properties = properties
        self.profiling_enabled = bool(properties & command_queue_properties.PROFILING_ENABLE)
        self.out_of_order = bool(properties & command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self._lock = threading.Lock()
        self._last: Event | None = None  # in-order: the latest command, if not yet complete
        self._barrier: Event | None = None  # out-of-order: what later commands must wait for
        self._pending: set[Event] = set()
        # a recorder of delayed commands (``ppcl.overlay``): ``intercept`` returns the event of a
        # recorded command, or None to let it run here; ``flush`` runs what it recorded
        self._overlay: Any = None
        # while above 0, commands the recorder lets pass without seeing them (it sets this when
        # recording gains nothing and nothing is recorded): counted down here, so that passing
        # costs no call and a launch makes no description of itself for the recorder
        self._overlay_passes = 0
        # host fusion (``ppcl.hostfusion``): ``launch`` may replace a kernel launch by a
        # rewritten one, ``observe`` sees every other command (its alias table)
        self._hostfusion: Any = None
        self._collects = device.backend.collects_failures
        for hook in queue_hooks:
            hook(self)

    # ------------------------------------------------------------------ enqueueing

    def _enqueue(self, kind: int, action: Action, wait_for: Sequence[Event] | None = None,
                 *, blocking: bool = False, after_all: bool = False,
                 routine: str = "clEnqueue", uses: Sequence[MemoryObject] = (),
                 task: Any = None, keeps_layout: bool = False) -> Event:
        """Enqueue ``action`` as a command of type ``kind`` and return its event.

        ``after_all`` makes the command wait for every command enqueued before it (markers and
        barriers). Errors of a command run synchronously are raised here. A command that is held
        holds the memory objects in ``uses`` until it completes, so releasing one of them
        meanwhile does not free bytes the command will still read or write. ``task`` describes
        the command to an overlay (a ``KernelTask`` or ``TransferTask``), which may record it.
        Unless ``keeps_layout`` (a launch host fusion rewrote), a buffer kept in another layout
        gets its original bytes back before the command runs.
        """
        waits = _check_wait_list(wait_for, self.context, routine)
        if self._hostfusion is not None and kind != _LAUNCH:  # it sees launches in enqueue
            self._hostfusion.observe(kind, uses, task)
        if Kept.count and not keeps_layout:
            action = _restoring(action, uses, task)
        if self._overlay is not None:
            if self._overlay_passes > 0:
                self._overlay_passes -= 1  # a race here only changes how long passing lasts
            else:
                recorded = self._overlay.intercept(kind, action, waits, blocking, uses, task)
                if recorded is not None:
                    return recorded
        for waited in waits:  # a command another queue's overlay holds runs now
            waited._flush_recorded()
        event = Event(self.context, self, kind)
        with self._lock:
            deps = [e for e in waits if not e.is_done]
            if self.out_of_order:
                if self._barrier is not None and not self._barrier.is_done:
                    deps.append(self._barrier)
                if after_all:
                    deps.extend(e for e in self._pending if not e.is_done)
                if kind == command_type.BARRIER:
                    self._barrier = event
            elif self._last is not None and not self._last.is_done:
                deps.append(self._last)
            failed = bool(waits) and any(e.command_execution_status < COMPLETE for e in waits)
            # nothing to do (``enqueue_no_work``) completes at once in an out-of-order queue too
            run_now = not deps and not failed and (not self.out_of_order or action is _nothing)
            if not run_now:
                self._pending.add(event)
            if not self.out_of_order:
                self._last = event
        if run_now:
            self._run_synchronously(event, action)
            return event
        for mem in uses:
            mem.hold()
        event._on_done(lambda _status: self._forget(event, uses))
        command = _HeldCommand(self, event, action, len(deps))
        command.failed = failed
        if not deps:
            self._submit(command)
        for dep in deps:
            dep._on_done(command.dependency_done)
        if blocking:
            event.wait()
        return event

    def _run_direct(self, kind: int, run: Callable[[Any], None], args: Any, launch: Any,
                    failure: Callable[[BaseException, Any], BaseException],
                    hostfusion_passed: bool = False) -> Event | None:
        """Run a command of type ``kind`` at once in this thread, ``run(args)``, and return its
        completed event; None, having done nothing, when it must take ``_enqueue``'s way
        instead: on an out-of-order queue, one with host fusion (unless it left this launch as
        written, ``hostfusion_passed``) or a recording overlay, while a buffer is kept in
        another layout, or while the queue's latest command is not complete.
        ``failure(error, launch)`` is the error to report and raise for one the run raised.

        The hot path of a launch and of a transfer with no wait list (a host loop's small
        blocking read of a flag), without a closure, a wait list or the hooks, in one frame:
        the event is queued, submitted and started at one moment (nothing lies between them),
        and the queue's lock is taken without a ``with`` block, which costs twice as much."""
        if self.out_of_order or (self._hostfusion is not None and not hostfusion_passed) \
                or Kept.count:
            return None
        passing = self._overlay is not None
        if passing and self._overlay_passes <= 0:
            return None
        # a command's times are read only as profiling info: without it they cost two clock
        # reads of a launch and are left at 0
        timed = self.profiling_enabled
        event = running_event(self.context, self, kind, _now() if timed else 0)
        lock = self._lock
        lock.acquire()
        try:
            last = self._last
            if last is not None and last._status > COMPLETE:  # not done
                return None
            self._last = event
        finally:
            lock.release()
        if passing:
            self._overlay_passes -= 1  # as in _enqueue: a race only changes how long it lasts
        try:
            run(args)
        except BaseException as error:
            reported = failure(error, launch)
            fail_event(event, reported)
            if reported is error:
                raise
            raise reported from None
        event._ran(_now() if timed else 0)
        return event

    def _forget(self, event: Event, uses: Sequence[MemoryObject]) -> None:
        with self._lock:
            self._pending.discard(event)
        for mem in uses:
            mem.unhold()

    def _run_synchronously(self, event: Event, action: Action) -> None:
        """Run ``action`` in this thread and complete ``event`` with its times, or with the
        failure's code (raised). A launch's and a transfer's hot path does the same in one
        frame (``_run_direct``)."""
        submit = time.perf_counter_ns()
        try:
            action()
        except BaseException as error:
            fail_event(event, error)
            raise
        end = time.perf_counter_ns()
        event._set_times_complete(submit, submit, end)

    def _submit(self, command: _HeldCommand) -> None:
        """Hand a ready command to a command thread. One whose wait list failed goes there too
        and fails there: failing it here, in the thread completing its dependency, would fail
        its own dependents from inside that completion's callbacks, one Python frame deeper per
        command of a chain (a RecursionError past a thousand or so)."""
        if not command.failed:
            command.event._advance(SUBMITTED)
        self.device.backend.submit(lambda: _execute(command))

    # ------------------------------------------------------------------ synchronization

    def finish(self) -> None:
        """Wait for the commands enqueued before the call (clFinish). Those enqueued meanwhile,
        by other threads or by callbacks of the commands waited for, are not waited for: a
        callback that keeps enqueuing would otherwise keep ``finish`` from returning."""
        if not self._pending and self._overlay is None and not self._collects:
            # nothing held back: what an in-order queue ran last, at once in this thread or
            # another, is all there can be to wait for (a set read whole under the GIL)
            last = self._last
            if last is None or last._status <= COMPLETE:
                return
        if self._overlay is not None:
            self._overlay.flush()
        with self._lock:
            pending = [e for e in self._pending if not e.is_done]
            # an in-order queue's latest command: one run at once in another thread (a
            # launch's direct way) is in no pending set, and it completes after all before it
            last = self._last
        if last is not None and not last.is_done:
            pending.append(last)
        for event in pending:
            try:
                event.wait()
            except Error:
                pass  # a failed command is reported through its event
        failure = self.device.backend.collected_failure()
        if failure is not None:  # a checking device collecting its findings
            raise KernelCheckError("clFinish", str(failure), failure.findings)

    def flush(self) -> None:
        """Commands are handed to the device as they become ready; nothing to flush."""

    def __enter__(self) -> CommandQueue:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Finishes the queue. Used after its ``with`` block, the queue still runs commands, and
        each use warns ``CommandQueueUsedAfterExit``, as PyOpenCL's does."""
        self.finish()
        for name in _USES:  # instance attributes: the queue's methods cost nothing more before
            setattr(self, name, _warning_after_exit(getattr(self, name)))

    def get_info(self, param: int) -> Any:
        values: dict[int, Any] = {
            command_queue_info.CONTEXT: self.context,
            command_queue_info.DEVICE: self.device,
            command_queue_info.REFERENCE_COUNT: 1,
            command_queue_info.PROPERTIES: self.properties,
        }
        if param not in values:
            raise make_error("clGetCommandQueueInfo", "INVALID_VALUE",
                             f"unknown command_queue_info {param}")
        return values[param]


    def _get_cl_version(self) -> tuple[int, int]:
        """The OpenCL version of the queue's platform, as PyOpenCL's."""
        return self.context._get_cl_version()


    def __repr__(self) -> str:
        order = "out-of-order" if self.out_of_order else "in-order"
        return f"<ppcl.CommandQueue {order} on '{self.device.name}' at 0x{id(self):x}>"


def _restoring(action: Action, uses: Sequence[MemoryObject], task: Any) -> Action:
    """``action`` preceded by restoring the original layout of the kept buffers it uses (a
    sub-buffer's parent too); a transfer that only reads a buffer leaves its other layout
    valid."""
    kept = [(mem._root or mem) for mem in uses if (mem._root or mem).keeper is not None]
    if not kept:
        return action
    written = {id(m._root or m) for m, _offset, _size in task.writes} \
        if isinstance(task, TransferTask) else None

    def restore_then_run() -> None:
        for mem in kept:
            mem.keeper.restore(mem, written is None or id(mem) in written)
        action()
    return restore_then_run


def fail_event(event: Event, error: BaseException) -> None:
    """Complete the event of a command that raised ``error``: with the code of an OpenCL
    error, CL_OUT_OF_RESOURCES for anything else."""
    event._complete(error.code if isinstance(error, Error) else _OUT_OF_RESOURCES, error)


def _execute(command: _HeldCommand) -> None:
    event = command.event
    if command.failed:
        event._complete(_WAIT_LIST_ERROR)
        return
    event._advance(RUNNING)
    try:
        command.action()
    except BaseException as error:  # reported through the event
        fail_event(event, error)
        return
    event._complete(COMPLETE)


def _check_wait_list(wait_for: Sequence[Event] | None, context: Context,
                     routine: str) -> list[Event]:
    if not wait_for:
        return []
    if isinstance(wait_for, Event):
        raise make_error(routine, "INVALID_EVENT_WAIT_LIST",
                         "wait_for takes a list of events, not one event: wait_for=[event]")
    events = list(wait_for)
    for event in events:
        if not isinstance(event, Event):
            raise make_error(routine, "INVALID_EVENT_WAIT_LIST", f"{event!r} is not an Event")
        if event.context is not context:
            raise make_error(routine, "INVALID_CONTEXT",
                             "an event in wait_for belongs to another context")
    return events


def check_is_queue(queue: Any, routine: str) -> None:
    """``queue`` must be a CommandQueue (CL_INVALID_COMMAND_QUEUE)."""
    if not isinstance(queue, CommandQueue):
        raise make_error(routine, "INVALID_COMMAND_QUEUE", f"{queue!r} is not a CommandQueue")


def enqueue_marker(queue: CommandQueue, wait_for: Sequence[Event] | None = None) -> Event:
    """An event that completes when ``wait_for`` (or, without it, every earlier command) has."""
    check_is_queue(queue, "clEnqueueMarkerWithWaitList")
    return queue._enqueue(command_type.MARKER, _nothing, wait_for, after_all=not wait_for,
                          routine="clEnqueueMarkerWithWaitList")


def enqueue_no_work(queue: CommandQueue, wait_for: Sequence[Event] | None = None,
                    routine: str = "clEnqueueMarkerWithWaitList") -> Event:
    """The event of a command with nothing to do (an empty launch or copy): it completes once
    ``wait_for`` has, at once when that is empty. A marker without a wait list would instead
    wait for every earlier command of an out-of-order queue, unrelated ones too."""
    return queue._enqueue(command_type.MARKER, _nothing, wait_for, routine=routine)


def enqueue_barrier(queue: CommandQueue, wait_for: Sequence[Event] | None = None) -> Event:
    """Like a marker, and later commands of an out-of-order queue wait for it."""
    check_is_queue(queue, "clEnqueueBarrierWithWaitList")
    return queue._enqueue(command_type.BARRIER, _nothing, wait_for, after_all=not wait_for,
                          routine="clEnqueueBarrierWithWaitList")


def _nothing() -> None:
    return None
