"""The threaded CPU device: programs compiled to C, work-groups spread over a native pool.

A program's kernels compile at their first launch with each shape (the local size is baked
into the work-group function) and are kept per shape. A launch runs the groups of its NDRange
through the device's ``run_groups``: the threaded pool here, the calling thread in the serial
device (``ppcl/devices/serial.py``), which shares this compile path.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable, Sequence

from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import Size3
from ppcl.compiler.pipeline import Pipeline
from ppcl.devices.commands import CommandExecutor
from ppcl.devices.cpu.args import PackedArgs
from ppcl.devices.cpu.build import CompiledKernel, build_kernel, launch_descriptor, spec_for
from ppcl.devices.cpu.pool import ChunkRunner, WorkGroupPool
from ppcl.devices.cpu.probe import CPUInfo, configured_threads, probe_cpu
from ppcl.devices.host_memory import ALIGNMENT, BufferAllocator
from ppcl.devices.interface import (
    Allocation,
    ArgValue,
    Device,
    DeviceInfo,
    DeviceProgram,
    KernelLaunch,
    NDRange,
)
from ppcl.settings import Debug

MAX_WORK_GROUP_SIZE = 4096
LOCAL_MEM_SIZE = 1024 * 1024
PREFERRED_GROUP_ITEMS = 256
EXTENSIONS = (
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_fp64",
)

# run_groups(run_chunk, num_groups, local_bytes): run groups 0 .. num_groups-1
GroupRunner = Callable[[ChunkRunner, int, int], None]


def vector_bytes(flags: frozenset[str]) -> int:
    if "avx512f" in flags:
        return 64
    if "avx" in flags or "avx2" in flags:
        return 32
    return 16


def host_device_info(cpu: CPUInfo, name: str, threads: int) -> DeviceInfo:
    """The description of a device that runs kernels on this host's processor."""
    return DeviceInfo(
        name=name, vendor=cpu.vendor, kind="cpu", compute_units=threads,
        clock_mhz=cpu.clock_mhz, max_work_group_size=MAX_WORK_GROUP_SIZE,
        max_work_item_sizes=(MAX_WORK_GROUP_SIZE,) * 3, local_mem_size=LOCAL_MEM_SIZE,
        global_mem_size=cpu.memory_bytes,
        max_mem_alloc_size=max(cpu.memory_bytes // 4, 128 * 1024 * 1024),
        global_mem_cache_size=cpu.last_level_cache_bytes, cache_line=cpu.cache_line,
        vector_bytes=vector_bytes(cpu.flags), mem_base_addr_align=ALIGNMENT,
        host_unified_memory=True, extensions=EXTENSIONS, threads=threads)


def _largest_divisor(n: int, limit: int) -> int:
    """The largest divisor of ``n`` not above ``limit``, preferring multiples of 16, then 8."""
    best = {16: 0, 8: 0, 1: 1}
    for d in range(1, min(n, limit) + 1):
        if n % d == 0:
            for multiple in (16, 8, 1):
                if d % multiple == 0:
                    best[multiple] = d
    return best[16] or best[8] or best[1]


@functools.lru_cache(maxsize=1024)
def choose_local_size(global_size: Size3, dims: int, max_group: int, max_items: Size3,
                      threads: int) -> Size3:
    """A local size for ``local_size=None``: divisors of the global size, dimension 0 first,
    up to ``PREFERRED_GROUP_ITEMS`` items, leaving at least one group per thread when the
    NDRange is large enough (pocl chooses the same way)."""
    total = global_size[0] * global_size[1] * global_size[2]
    budget = min(max_group, PREFERRED_GROUP_ITEMS, max(1, total // max(1, threads)))
    local = [1, 1, 1]
    for d in range(dims):
        limit = min(budget, max_items[d])
        local[d] = _largest_divisor(global_size[d], limit) if limit > 1 else 1
        budget //= local[d]
    return local[0], local[1], local[2]


class CPULaunch(KernelLaunch):
    """One compiled kernel for one NDRange; the launch descriptor is read-only for the C code,
    so one serves every launch of the shape."""

    def __init__(self, compiled: CompiledKernel, ndrange: NDRange,
                 run_groups: GroupRunner) -> None:
        self.compiled = compiled
        self.ndrange = ndrange
        self.static_local_bytes = compiled.local_mem_static_bytes
        self._descriptor = launch_descriptor(ndrange)
        self._descriptor_ref = ctypes.byref(self._descriptor)
        self._num_groups = ndrange.group_count
        self._run_groups = run_groups
        self._packed: PackedArgs | None = None

    def _packed_for(self, args: Sequence[ArgValue]) -> PackedArgs:
        """The packed form of ``args``, kept while the runtime passes the same tuple."""
        packed = self._packed
        if packed is None or packed.source is not args:
            packed = PackedArgs(args, self.static_local_bytes)
            self._packed = packed
        return packed

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return self._packed_for(args).local_bytes

    def run(self, args: Sequence[ArgValue]) -> None:
        packed = self._packed_for(args)
        entry = self.compiled.entry
        argv = packed.argv
        descriptor = self._descriptor_ref

        def run_chunk(first: int, last: int, local_address: int) -> None:
            entry(argv, descriptor, first, last, local_address)

        printf = self.compiled.printf
        if printf is None:
            self._run_groups(run_chunk, self._num_groups, packed.local_bytes)
            return
        with printf.lock:  # the library's one buffer holds this launch's records only
            try:
                self._run_groups(run_chunk, self._num_groups, packed.local_bytes)
            finally:
                printf.print_records()


class CPUProgram(DeviceProgram):
    """A program for a device running C work-group functions on the host."""

    def __init__(self, module: ir.Module, options: BuildOptions, debug: Debug,
                 run_groups: GroupRunner, pipeline: Pipeline | None = None) -> None:
        self.module = module
        self.pipeline = pipeline
        self.options = options
        self.debug = debug
        self._run_groups = run_groups
        self._compiled: dict[tuple[str, object], CompiledKernel] = {}
        self._launches: dict[tuple[str, NDRange], CPULaunch] = {}
        self._lock = threading.Lock()

    def compiled(self, kernel_name: str, ndrange: NDRange) -> CompiledKernel:
        """The kernel built for the specialization of ``ndrange`` (built once, then kept)."""
        spec = spec_for(ndrange)
        key = (kernel_name, spec)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = build_kernel(self.module, kernel_name, spec, self.options,
                                            self.debug, key_parts=(self.options.canonical(),),
                                            pipeline=self.pipeline)
                    self._compiled[key] = compiled
        return compiled

    def prepare(self, kernel_name: str, ndrange: NDRange) -> CPULaunch:
        """One launch object per kernel and shape, shared by every ``Kernel`` of the program
        (``prg.name(...)`` makes a new one each time, as in PyOpenCL)."""
        key = (kernel_name, ndrange)
        launch = self._launches.get(key)
        if launch is None:
            launch = CPULaunch(self.compiled(kernel_name, ndrange), ndrange, self._run_groups)
            self._launches[key] = launch
        return launch


class HostDevice(Device):
    """What every device running on the host shares: host memory and command threads."""

    def __init__(self, info: DeviceInfo) -> None:
        self.info = info
        self.allocator = BufferAllocator()
        self.executor = CommandExecutor(max(2, info.threads))

    @property
    def threads(self) -> int:
        return self.info.threads

    def allocate(self, nbytes: int) -> Allocation:
        return self.allocator.allocate(nbytes)

    def submit(self, task: Callable[[], None]) -> None:
        self.executor.submit(task)

    def default_local_size(self, global_size: Size3, work_dim: int) -> Size3:
        info = self.info
        return choose_local_size(global_size, work_dim, info.max_work_group_size,
                                 info.max_work_item_sizes, info.threads)


class CPUDevice(HostDevice):
    """The host processor, its work-groups spread over a pool of ``threads`` threads."""

    def __init__(self, threads: int | None = None, kind: str = "cpu") -> None:
        self.cpu = probe_cpu()
        count = configured_threads(threads)
        super().__init__(host_device_info(self.cpu, f"{kind}-{self.cpu.model}", count))
        self.pool = WorkGroupPool(count)

    def run_groups(self, run_chunk: ChunkRunner, num_groups: int, local_bytes: int) -> None:
        self.pool.run(run_chunk, num_groups, local_bytes)

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> CPUProgram:
        return CPUProgram(module, options, debug, self.run_groups)
