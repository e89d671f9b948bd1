"""The CPU device's native runtime (``runtime.c``): a pthread pool that runs a launch's work-groups.

The runtime is C built once by the system compiler through the kernel cache, like a kernel, and
loaded with ctypes. A launch is one foreign call, ``ppcl_pool_run(pool, task)``, where the task
(kernel entry point, argument block, launch descriptor, group count, local bytes) is a struct
prepared once per launch shape and argument block. The call releases the GIL; the calling
thread runs chunks of groups itself, the pool's workers the rest.

A fault in kernel code (SIGSEGV, SIGBUS, SIGFPE, SIGILL) comes back as :class:`KernelFault`;
Ctrl-C while a launch runs or is awaited abandons it: the pool is replaced, whatever the
abandoned launch still uses is kept alive for good, and ``KeyboardInterrupt`` is raised.
"""

from __future__ import annotations

import ctypes
import functools
import signal
import threading
from pathlib import Path
from typing import Any

from ppcl.compiler import toolchain
from ppcl.devices.interface import KernelFault

RUNTIME_SOURCE = Path(__file__).with_name("runtime.c")
INTERRUPTED = -1
NO_MEMORY = -2

_SIGNAL_WORDS: dict[int, str] = {
    signal.SIGSEGV: "a segmentation fault (SIGSEGV): an access outside valid memory, such as "
                    "an index past the end of a buffer",
    signal.SIGBUS: "a bus error (SIGBUS): an access to memory that is not mapped or misaligned",
    signal.SIGFPE: "an arithmetic exception (SIGFPE), such as an integer division by zero",
    signal.SIGILL: "an illegal instruction (SIGILL)",
}


class Task(ctypes.Structure):
    """Mirror of ``ppcl_task`` in runtime.c."""

    _fields_ = [
        ("fn", ctypes.c_void_p),
        ("args", ctypes.c_void_p),
        ("launch", ctypes.c_void_p),
        ("num_groups", ctypes.c_size_t),
        ("local_bytes", ctypes.c_size_t),
        ("flags", ctypes.c_size_t),
        ("total_ns", ctypes.c_long),
        ("caller_ns", ctypes.c_long),
        ("caller_chunks", ctypes.c_size_t),
        ("chunks", ctypes.c_size_t),
    ]


@functools.lru_cache(maxsize=1)
def runtime_library() -> ctypes.CDLL:
    """The compiled runtime (built on first use, then taken from the cache)."""
    library = toolchain.build_library(RUNTIME_SOURCE.read_text(), extra_flags=("-pthread",),
                                      key_parts=("ppcl-cpu-runtime",))
    library.ppcl_pool_create.argtypes = [ctypes.c_int]
    library.ppcl_pool_create.restype = ctypes.c_void_p
    library.ppcl_pool_destroy.argtypes = [ctypes.c_void_p]
    library.ppcl_pool_destroy.restype = None
    library.ppcl_pool_threads.argtypes = [ctypes.c_void_p]
    library.ppcl_pool_threads.restype = ctypes.c_int
    library.ppcl_last_fault_address.argtypes = []
    library.ppcl_last_fault_address.restype = ctypes.c_size_t
    library.ppcl_install_signal_handlers.argtypes = []
    library.ppcl_install_signal_handlers.restype = ctypes.c_int
    # ppcl_pool_run is called with ready-made ctypes objects: no argtypes to convert through
    library.ppcl_pool_run.restype = ctypes.c_int
    return library


COPY_BLOCK = 256 * 1024  # PPCL_COPY_BLOCK of runtime.c: the bytes one group of a copy moves


def copy_task(dst: int, src: int, nbytes: int) -> tuple[Any, Any]:
    """A pool task copying ``nbytes`` from address ``src`` to ``dst`` (``ppcl_copy_groups``,
    one group per ``COPY_BLOCK``), and what it points into (keep it alive while it runs)."""
    library = runtime_library()
    size = ctypes.c_size_t(nbytes)
    argv = (ctypes.c_void_p * 3)(dst, src, ctypes.addressof(size))
    fn = ctypes.cast(library.ppcl_copy_groups, ctypes.c_void_p).value
    task = Task(fn, ctypes.addressof(argv), None, -(-nbytes // COPY_BLOCK), 0)
    return ctypes.byref(task), (task, argv, size)


_check_signals = ctypes.pythonapi.PyErr_CheckSignals
_check_signals.argtypes = []
_check_signals.restype = ctypes.c_int


class NativePool:
    """A pool of ``threads`` threads (the launching thread included), made on first use."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._handle: ctypes.c_void_p | None = None
        self._run: Any = None  # ppcl_pool_run, bound with the first pool
        self._lock = threading.Lock()
        self._abandoned: list[Any] = []

    def _create(self) -> ctypes.c_void_p:
        with self._lock:
            if self._handle is None:
                library = runtime_library()
                self._run = library.ppcl_pool_run
                address = library.ppcl_pool_create(self.threads)
                if not address:
                    raise MemoryError("cannot create the CPU device's thread pool")
                self._handle = ctypes.c_void_p(address)
            return self._handle

    def run(self, task: Any, keep: Any, kernel_name: str) -> None:
        """Run ``task`` (a ``byref`` of a :class:`Task`); ``keep`` is what it points into,
        kept alive for good if the launch is abandoned."""
        handle = self._handle or self._create()
        status = self._run(handle, task)
        if status:
            self.failed(status, handle, keep, kernel_name)

    def keep_for_good(self, keep: Any) -> None:
        """Keep ``keep`` alive for good: what an abandoned launch's workers may still use
        beyond the task itself, such as the objects owning its buffers."""
        self._abandoned.append(keep)

    def failed(self, status: int, handle: ctypes.c_void_p, keep: Any, kernel_name: str) -> None:
        """Raise what a run of ``kernel_name`` ending with ``status`` (not 0) means."""
        if status == INTERRUPTED:
            # workers may still be running the kernel (or never stop): leave them the pool and
            # everything the launch points into
            self._abandoned.append((handle, keep))
            with self._lock:
                if self._handle is handle:
                    self._handle = None
            _check_signals()  # runs Python's SIGINT handler: KeyboardInterrupt
            raise KeyboardInterrupt(f"kernel '{kernel_name}' interrupted")
        if status == NO_MEMORY:
            raise MemoryError(f"kernel '{kernel_name}': no memory for its local memory block")
        address = runtime_library().ppcl_last_fault_address()
        words = _SIGNAL_WORDS.get(status, f"signal {status}")
        raise KernelFault(f"kernel '{kernel_name}' stopped with {words}, at address "
                          f"{address:#x}; the launch did not complete and the buffers it "
                          "writes may hold partial results")

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            runtime_library().ppcl_pool_destroy(handle)
