"""Events: the status of an enqueued command, its profiling times and completion callbacks.

An event moves QUEUED -> SUBMITTED -> RUNNING -> COMPLETE (or to a negative error code). The
four profiling timestamps are ``time.perf_counter_ns()`` values taken at those moments, so they
are ordered and in nanoseconds. Callbacks registered with ``set_callback`` run once the event
reaches their status, in the thread that moves it there (at once if it already has).
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ppcl.devices.commands import blocking
from ppcl.runtime.constants import (
    command_execution_status,
    command_type,
    event_info,
    info_attributes,
    profiling_info,
)
from ppcl.runtime.context import Context
from ppcl.runtime.errors import ERROR_CODES, error_name, integer_arg, make_error
from ppcl.runtime.handles import Handle

if TYPE_CHECKING:
    from ppcl.runtime.queue import CommandQueue

QUEUED = command_execution_status.QUEUED
SUBMITTED = command_execution_status.SUBMITTED
RUNNING = command_execution_status.RUNNING
COMPLETE = command_execution_status.COMPLETE

StatusCallback = Callable[[int], None]
_Lock = threading.Lock
_now = time.perf_counter_ns


class ProfilingInfo:
    """``event.profile.start`` and friends, in nanoseconds."""

    def __init__(self, event: Event) -> None:
        self._event = event

    @property
    def queued(self) -> int:
        return self._event.get_profiling_info(profiling_info.QUEUED)

    @property
    def submit(self) -> int:
        return self._event.get_profiling_info(profiling_info.SUBMIT)

    @property
    def start(self) -> int:
        return self._event.get_profiling_info(profiling_info.START)

    @property
    def end(self) -> int:
        return self._event.get_profiling_info(profiling_info.END)

    @property
    def complete(self) -> int:
        return self._event.get_profiling_info(profiling_info.COMPLETE)


@info_attributes(event_info, own=("command_queue", "command_type", "context"))
class Event(Handle):
    """The handle of one command (or a user event)."""

    # what most events never change stays on the class, and the instance gets its own value
    # only when it does: a launch makes an event, and this is a third of its cost
    _waiter: threading.Event | None = None
    # (status, callback) pairs not called yet: a list of its own once there is one
    _callbacks: list[tuple[int, StatusCallback]] | tuple[()] = ()
    error: BaseException | None = None
    # set while an overlay holds the command recorded: runs it (and what it depends on)
    _flush: Callable[[], None] | None = None

    def __init__(self, context: Context, queue: CommandQueue | None, kind: int,
                 *, status: int = QUEUED) -> None:
        self.context = context
        self.command_queue = queue
        self.command_type = kind
        self._status = status
        self._lock = _Lock()
        self._times = [_now(), 0, 0, 0]

    # ------------------------------------------------------------------ status

    def _flush_recorded(self) -> None:
        """The program looks at this event: an overlay that delayed it runs it now."""
        flush = self._flush
        if flush is not None:
            flush()

    @property
    def command_execution_status(self) -> int:
        self._flush_recorded()
        return self._status

    @property
    def is_done(self) -> bool:
        return self._status <= COMPLETE

    def _advance(self, status: int, error: BaseException | None = None) -> None:
        """Move to ``status``; completes (or fails) the event when ``status <= COMPLETE``."""
        now = time.perf_counter_ns()
        with self._lock:
            if self._status <= COMPLETE:
                return
            if status == SUBMITTED:
                self._times[1] = now
            elif status == RUNNING:
                self._times[1] = self._times[1] or now
                self._times[2] = now
            else:
                self._times[1] = self._times[1] or now
                self._times[2] = self._times[2] or now
                self._times[3] = now
                self.error = error
            self._status = status
            due = [(wanted, cb) for wanted, cb in self._callbacks if status <= wanted]
            self._callbacks = [(wanted, cb) for wanted, cb in self._callbacks
                               if status > wanted] or ()
            waiter = self._waiter if status <= COMPLETE else None
        for wanted, callback in due:  # before waking waiters: a wait returns with the
            callback(_reported(wanted, status))  # command's memory back in the allocator
        if waiter is not None:
            waiter.set()

    def _complete(self, status: int = COMPLETE, error: BaseException | None = None) -> None:
        self._advance(status, error)

    def _set_times_complete(self, submit: int, start: int, end: int) -> None:
        """Record a command that ran synchronously in the enqueuing thread (the times are read
        only once the status is COMPLETE, which ``_ran`` sets under the lock)."""
        times = self._times
        times[1], times[2] = submit, start
        self._ran(end)

    def _ran(self, end: int) -> None:
        """Complete the event of a command that ran synchronously, at ``end``: its other times
        are set already (``running_event`` sets them on a launch's hot path). The lock is
        taken without a ``with`` block, which costs twice as much as the calls."""
        lock = self._lock
        lock.acquire()
        try:
            self._times[3] = end
            self._status = COMPLETE
            callbacks, waiter = self._callbacks, self._waiter
            if callbacks:
                self._callbacks = ()
        finally:
            lock.release()
        for wanted, callback in callbacks:
            callback(wanted)
        if waiter is not None:
            waiter.set()

    def set_callback(self, callback_type: int, callback: StatusCallback) -> None:
        """Call ``callback(callback_type)`` when the event reaches ``callback_type`` (or
        ``callback(error)`` when it fails).

        An exception the callback raises is shown as a warning and otherwise ignored, as
        PyOpenCL does: the callback runs in whichever thread moves the event, and an exception
        there would stop the queue before it woke the event's waiters."""
        if callback_type not in (COMPLETE, RUNNING, SUBMITTED):
            raise make_error("clSetEventCallback", "INVALID_VALUE",
                             f"callback type {callback_type!r}: it must be COMPLETE, RUNNING "
                             "or SUBMITTED (command_execution_status)")
        if not callable(callback):
            raise make_error("clSetEventCallback", "INVALID_VALUE",
                             f"the callback {callback!r} is not callable")
        self._flush_recorded()
        self._add_callback(callback_type, _guarded(callback))

    def _add_callback(self, callback_type: int, callback: StatusCallback) -> None:
        with self._lock:
            if self._status > callback_type:
                if self._callbacks:
                    self._callbacks.append((callback_type, callback))
                else:
                    self._callbacks = [(callback_type, callback)]
                return
            status = self._status
        callback(_reported(callback_type, status))

    def _on_done(self, hook: StatusCallback) -> None:
        self._add_callback(COMPLETE, hook)

    # ------------------------------------------------------------------ waiting

    def wait(self) -> None:
        self._flush_recorded()
        if self._status > COMPLETE:
            with self._lock:
                if self._status > COMPLETE and self._waiter is None:
                    self._waiter = threading.Event()
                waiter = self._waiter
            if waiter is not None:
                with blocking():  # a callback on a command thread may wait
                    waiter.wait()
        if self._status < COMPLETE:
            raise self._failure("clWaitForEvents")

    def _failure(self, routine: str) -> Exception:
        detail = f"command failed with status {error_name(self._status)}"
        if self.error is not None:
            detail += f": {self.error}"
        return make_error(routine, ERROR_CODES["EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"], detail)

    # ------------------------------------------------------------------ info

    def get_info(self, param: int) -> Any:
        if param == event_info.COMMAND_EXECUTION_STATUS:
            self._flush_recorded()
        values: dict[int, Any] = {
            event_info.COMMAND_QUEUE: self.command_queue,
            event_info.COMMAND_TYPE: self.command_type,
            event_info.REFERENCE_COUNT: 1,
            event_info.COMMAND_EXECUTION_STATUS: self._status,
            event_info.CONTEXT: self.context,
        }
        if param not in values:
            raise make_error("clGetEventInfo", "INVALID_VALUE", f"unknown event_info {param}")
        return values[param]


    def get_profiling_info(self, param: int) -> int:
        self._flush_recorded()
        queue = self.command_queue
        if queue is None:
            raise make_error("clGetEventProfilingInfo", "PROFILING_INFO_NOT_AVAILABLE",
                             "a user event has no profiling info (it runs on no queue)")
        if not queue.profiling_enabled:
            raise make_error("clGetEventProfilingInfo", "PROFILING_INFO_NOT_AVAILABLE",
                             "the command queue was created without PROFILING_ENABLE")
        if self._status != COMPLETE:
            raise make_error("clGetEventProfilingInfo", "PROFILING_INFO_NOT_AVAILABLE",
                             "the command has not completed")
        if param == profiling_info.COMPLETE:  # no child commands: complete when it ends
            param = profiling_info.END
        index = param - profiling_info.QUEUED
        if not 0 <= index < 4:
            raise make_error("clGetEventProfilingInfo", "INVALID_VALUE",
                             f"unknown profiling_info {param}")
        return self._times[index]

    @property
    def profile(self) -> ProfilingInfo:
        return ProfilingInfo(self)


    def __repr__(self) -> str:
        kind = command_type.to_string(self.command_type, "<{}>")
        return f"<ppcl.Event {kind} status={self._status} at 0x{id(self):x}>"


# the lock of every event ``running_event`` makes: sharing one is safe, since no code holds an
# event's lock while it takes another's (callbacks and waiters run after the lock is let go)
_running_lock = _Lock()
_new_event = object.__new__


def running_event(context: Context, queue: CommandQueue, kind: int, now: int) -> Event:
    """The event of a command that an in-order queue runs at once in the enqueuing thread,
    queued, submitted and started at ``now`` (``_ran`` completes it); QUEUED until then, as
    any event whose command has not completed.

    A launch's hot path makes one per launch, so it is made without ``__init__`` (calling a
    class that has one costs as much as setting the attributes) and without a lock of its own
    (allocating one costs as much again)."""
    event = _new_event(Event)
    event.context = context
    event.command_queue = queue
    event.command_type = kind
    event._status = QUEUED
    event._lock = _running_lock
    event._times = [now, now, now, 0]
    return event


def _reported(wanted: int, status: int) -> int:
    """The status a callback registered for ``wanted`` is given once the event has reached
    ``status``: the one it was registered for, as clSetEventCallback says, unless the command
    failed, when it is the error code."""
    return status if status < COMPLETE else wanted


def _guarded(callback: StatusCallback) -> StatusCallback:
    """``callback`` with its exceptions turned into warnings (see ``Event.set_callback``);
    a KeyboardInterrupt or SystemExit too, as PyOpenCL does: raised on a command thread, it
    ended that thread with the event's waiters never woken."""

    def call(status: int) -> None:
        try:
            callback(status)
        except BaseException as error:
            warnings.warn(f"an event callback ({callback!r}) raised {error!r}; ignored",
                          RuntimeWarning, stacklevel=2)

    return call


class UserEvent(Event):
    """An event the host completes with ``set_status(COMPLETE)`` or a negative error code."""

    def __init__(self, context: Context) -> None:
        if not isinstance(context, Context):
            raise make_error("clCreateUserEvent", "INVALID_CONTEXT", f"{context!r} is not a Context")
        super().__init__(context, None, command_type.USER, status=SUBMITTED)

    def set_status(self, status: int) -> None:
        status = integer_arg("clSetUserEventStatus", status, "status")
        if status > COMPLETE:
            raise make_error("clSetUserEventStatus", "INVALID_VALUE",
                             "a user event's status can only be COMPLETE or a negative error")
        if self._status <= COMPLETE:
            raise make_error("clSetUserEventStatus", "INVALID_OPERATION",
                             "the user event's status was already set")
        self._advance(status)


def wait_for_events(events: Sequence[Event]) -> None:
    events = list(events)
    if not events:  # clWaitForEvents needs at least one event
        raise make_error("clWaitForEvents", "INVALID_VALUE", "no events to wait for")
    for event in events:
        if not isinstance(event, Event):
            raise make_error("clWaitForEvents", "INVALID_EVENT", f"{event!r} is not an Event")
        if event.context is not events[0].context:
            raise make_error("clWaitForEvents", "INVALID_CONTEXT",
                             "the events belong to different contexts")
    failed = None
    for event in events:
        try:
            event.wait()
        except Exception as error:  # wait for all, then report the first failure
            failed = failed or error
    if failed is not None:
        raise failed
