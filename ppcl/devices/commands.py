"""Threads that run queued commands asynchronously, for devices that run on the host."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterator

# the executor whose worker the current thread is, if it is one
_worker_of = threading.local()


class CommandExecutor:
    """Threads that run queued commands asynchronously (started on first use).

    ``threads`` of them run commands at once. A worker that blocks (an event callback it runs
    waits for another command, or makes a blocking read) does not count while it waits: it
    would otherwise hold a thread that the command it waits for needs, and once every worker
    waited so, nothing would run again."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._tasks: deque[Callable[[], None]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._idle = 0
        self._blocked = 0
        self._workers: list[threading.Thread] = []

    def submit(self, task: Callable[[], None]) -> None:
        with self._cond:
            self._tasks.append(task)
            if self._idle:
                self._cond.notify()
                return
            if len(self._workers) - self._blocked < self.threads:
                self._start_worker()

    def _start_worker(self) -> None:
        """Start one more worker (the caller holds ``_cond``)."""
        worker = threading.Thread(target=self._loop, daemon=True,
                                  name=f"ppcl-cmd-{len(self._workers)}")
        self._workers.append(worker)
        worker.start()

    @contextlib.contextmanager
    def _blocking(self) -> Iterator[None]:
        """A worker of this executor waits: the tasks queued meanwhile get a thread."""
        with self._cond:
            self._blocked += 1
            if self._tasks and not self._idle:
                self._start_worker()
        try:
            yield
        finally:
            with self._cond:
                self._blocked -= 1

    def _loop(self) -> None:
        _worker_of.executor = self
        while True:
            with self._cond:
                while not self._tasks:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                task = self._tasks.popleft()
            task()
            # an idle worker keeps nothing of the command it ran: its closure holds the
            # command's buffers and host arrays, which the program may have deleted
            del task


def blocking() -> contextlib.AbstractContextManager[None]:
    """Wrap a wait that may block the current thread: on a command thread, its executor
    runs the commands queued meanwhile on another thread (see ``CommandExecutor``)."""
    executor: CommandExecutor | None = getattr(_worker_of, "executor", None)
    if executor is None:
        return contextlib.nullcontext()
    return executor._blocking()
