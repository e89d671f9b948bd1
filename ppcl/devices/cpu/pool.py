"""The CPU device's work-group scheduler: a persistent pool of threads running chunks of work-groups.

Work-groups are independent, so a launch is split into chunks of consecutive groups that the
threads claim from a shared counter, as pocl's pthread scheduler does. The thread that submits a
launch takes part in it: it starts running chunks at once and only waits for the chunks other
threads claimed, so a launch the pool has no time to join costs no wake-up latency. The compiled
work-group function is called through ctypes, which releases the GIL, so the chunks run in
parallel. Every thread owns one local-memory block, grown on demand and 128-byte aligned.

``PPCL_THREADS`` sets the number of threads taking part (default: the cores this process may
run on); ``PPCL_THREADS=1`` runs every launch serially in the submitting thread.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections import deque
from collections.abc import Callable

from ppcl.compiler.ir.layout import LOCAL_ALIGN as LOCAL_MEM_ALIGN
from ppcl.compiler.ir.layout import align_up

CHUNKS_PER_THREAD = 4

# run_chunk(first_group, last_group_exclusive, local_memory_address)
ChunkRunner = Callable[[int, int, int], None]


class _LocalBlock:
    """One thread's local memory: a raw buffer with a 128-byte aligned address."""

    def __init__(self) -> None:
        self.size = 0
        self.address = 0
        self._storage: ctypes.Array[ctypes.c_char] | None = None

    def ensure(self, size: int) -> int:
        if size > self.size:
            storage = ctypes.create_string_buffer(size + LOCAL_MEM_ALIGN)
            base = ctypes.addressof(storage)
            self._storage = storage
            self.address = align_up(base, LOCAL_MEM_ALIGN)
            self.size = size
        return self.address


class _Job:
    """One launch: ``num_chunks`` chunks of ``chunk`` groups, claimed through ``next_chunk``."""

    __slots__ = ("run_chunk", "num_groups", "chunk", "num_chunks", "next_chunk", "done",
                 "lock", "finished", "local_bytes", "error")

    def __init__(self, run_chunk: ChunkRunner, num_groups: int, chunk: int,
                 local_bytes: int) -> None:
        self.run_chunk = run_chunk
        self.num_groups = num_groups
        self.chunk = chunk
        self.num_chunks = (num_groups + chunk - 1) // chunk
        # next() on itertools.count is one C call, so claims are atomic under the GIL
        self.next_chunk = itertools.count()
        self.done = 0
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.local_bytes = local_bytes
        self.error: BaseException | None = None


class WorkGroupPool:
    """A persistent pool of threads sharing launches chunk by chunk."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._jobs: deque[_Job] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._workers: list[threading.Thread] = []
        self._tls = threading.local()
        self._start_lock = threading.Lock()

    def _block(self) -> _LocalBlock:
        block: _LocalBlock | None = getattr(self._tls, "block", None)
        if block is None:
            block = _LocalBlock()
            self._tls.block = block
        return block

    def _ensure_workers(self) -> None:
        if len(self._workers) == self.threads - 1:
            return
        with self._start_lock:
            while len(self._workers) < self.threads - 1:
                worker = threading.Thread(target=self._worker_loop, daemon=True,
                                          name=f"ppcl-cpu-{len(self._workers) + 1}")
                worker.start()
                self._workers.append(worker)

    def _worker_loop(self) -> None:
        while True:
            with self._cond:
                while not self._jobs:
                    self._cond.wait()
                job = self._jobs[0]
            self._work_on(job)
            with self._cond:
                if self._jobs and self._jobs[0] is job:
                    self._jobs.popleft()

    def _work_on(self, job: _Job) -> None:
        local = self._block().ensure(job.local_bytes) if job.local_bytes else 0
        ran = 0
        while True:
            index = next(job.next_chunk)
            if index >= job.num_chunks:
                break
            first = index * job.chunk
            try:
                job.run_chunk(first, min(first + job.chunk, job.num_groups), local)
            except BaseException as error:  # reported to the submitting thread
                job.error = error
            ran += 1
        if ran:
            with job.lock:
                job.done += ran
                if job.done == job.num_chunks:
                    job.finished.set()

    def chunk_size(self, num_groups: int) -> int:
        return max(1, num_groups // (self.threads * CHUNKS_PER_THREAD))

    def run(self, run_chunk: ChunkRunner, num_groups: int, local_bytes: int) -> None:
        """Run groups ``0 .. num_groups-1`` across the pool; return when all have run."""
        if num_groups <= 0:
            return
        if self.threads == 1 or num_groups == 1:
            local = self._block().ensure(local_bytes) if local_bytes else 0
            run_chunk(0, num_groups, local)
            return
        job = _Job(run_chunk, num_groups, self.chunk_size(num_groups), local_bytes)
        self._ensure_workers()
        with self._cond:
            self._jobs.append(job)
            self._cond.notify(min(self.threads - 1, job.num_chunks - 1))
        self._work_on(job)
        job.finished.wait()
        with self._cond:
            if job in self._jobs:
                self._jobs.remove(job)
        if job.error is not None:
            raise job.error
