"""The threaded CPU device: a persistent pool of threads running chunks of work-groups.

Work-groups are independent, so a launch is split into chunks of consecutive groups that the
threads claim from a shared counter, as pocl's pthread scheduler does. The thread that submits a
launch takes part in it: it starts running chunks at once and only waits for the chunks other
threads claimed, so a launch the pool has no time to join costs no wake-up latency. The compiled
work-group function is called through ctypes, which releases the GIL, so the chunks run in
parallel. Every thread owns one local-memory block, grown on demand and 128-byte aligned.

``PPCL_THREADS`` sets the number of threads taking part (default: the cores this process may
run on); ``PPCL_THREADS=1`` runs every launch serially in the submitting thread.

Commands that must run asynchronously (out-of-order queues, commands waiting for events) go to a
small executor of command threads, separate from the work-group pool.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import platform
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LOCAL_MEM_ALIGN = 128
CHUNKS_PER_THREAD = 4

# run_chunk(first_group, last_group_exclusive, local_memory_address)
ChunkRunner = Callable[[int, int, int], None]


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def configured_threads() -> int:
    """The number of threads a launch uses: ``PPCL_THREADS`` or the usable cores."""
    text = os.environ.get("PPCL_THREADS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            pass
    return _usable_cores()


@dataclass(frozen=True)
class CPUInfo:
    """What the host tells about its processor, for the device's info queries."""

    model: str
    vendor: str
    cores: int
    clock_mhz: int
    cache_line: int
    l1d_bytes: int
    last_level_cache_bytes: int
    memory_bytes: int
    flags: frozenset[str]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = 1
    if text.endswith("K"):
        scale, text = 1024, text[:-1]
    elif text.endswith("M"):
        scale, text = 1024 * 1024, text[:-1]
    try:
        return int(text) * scale
    except ValueError:
        return 0


def probe_cpu() -> CPUInfo:
    cpuinfo = _read(Path("/proc/cpuinfo"))
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    caches: dict[tuple[int, str], int] = {}
    cache_root = Path("/sys/devices/system/cpu/cpu0/cache")
    if cache_root.is_dir():
        for index in cache_root.glob("index*"):
            level = _read(index / "level").strip()
            kind = _read(index / "type").strip()
            if level.isdigit():
                caches[(int(level), kind)] = _parse_size(_read(index / "size"))
    last_level = max((size for (_, kind), size in caches.items() if kind != "Instruction"),
                     default=8 * 1024 * 1024)
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 8 * 1024**3
    try:
        clock = int(float(fields.get("cpu MHz", "0")))
    except ValueError:
        clock = 0
    return CPUInfo(
        model=fields.get("model name") or platform.processor() or platform.machine(),
        vendor=fields.get("vendor_id", "unknown"),
        cores=_usable_cores(),
        clock_mhz=clock,
        cache_line=int(fields.get("cache_alignment", "64") or 64),
        l1d_bytes=caches.get((1, "Data"), 32 * 1024),
        last_level_cache_bytes=last_level,
        memory_bytes=memory,
        flags=frozenset(fields.get("flags", "").split()),
    )


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
            self.address = (base + LOCAL_MEM_ALIGN - 1) // LOCAL_MEM_ALIGN * LOCAL_MEM_ALIGN
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


class CPUDevice:
    """The host processor as an OpenCL device: its description, pool and command threads."""

    def __init__(self, threads: int | None = None) -> None:
        self.info = probe_cpu()
        self.threads = threads if threads is not None else configured_threads()
        self.pool = WorkGroupPool(self.threads)
        self.executor = CommandExecutor(max(2, self.threads))

    def run_groups(self, run_chunk: ChunkRunner, num_groups: int, local_bytes: int) -> None:
        self.pool.run(run_chunk, num_groups, local_bytes)


_default: CPUDevice | None = None
_default_lock = threading.Lock()


def default_cpu_device() -> CPUDevice:
    """The process-wide CPU device (created on first use, ``PPCL_THREADS`` read then)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = CPUDevice()
        return _default
