"""Threads that run queued commands asynchronously, for devices that run on the host."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable


class CommandExecutor:
    """Threads that run queued commands asynchronously (started on first use)."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._tasks: deque[Callable[[], None]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._idle = 0
        self._workers: list[threading.Thread] = []

    def submit(self, task: Callable[[], None]) -> None:
        with self._cond:
            self._tasks.append(task)
            if self._idle:
                self._cond.notify()
                return
            if len(self._workers) < self.threads:
                worker = threading.Thread(target=self._loop, daemon=True,
                                          name=f"ppcl-cmd-{len(self._workers)}")
                self._workers.append(worker)
                worker.start()

    def _loop(self) -> None:
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
