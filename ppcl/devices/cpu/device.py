"""The threaded CPU device: programs compiled to C, work-groups spread over a native pool.

A program's kernels compile at their first launch with each shape (the local size is baked
into the work-group function) and are kept per shape. A launch is one call into the native
runtime (``native.py``, ``runtime.c``), which runs the groups of its NDRange on the device's
thread pool; the serial device (``ppcl/devices/serial.py``) is the same with one thread.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ppcl.compiler import toolchain
from ppcl.compiler.analysis.callgraph import grouping_observed, work_item_loops
from ppcl.compiler.codegen.c_printf import PRINTF_BUFFER_BYTES
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import Size3
from ppcl.compiler.ir.visit import fingerprint
from ppcl.compiler.pipeline import KernelSpec, Pipeline
from ppcl.devices.commands import CommandExecutor
from ppcl.devices.cpu.alone import PoolChoice
from ppcl.devices.cpu.args import ArgBlock, local_bytes, owners
from ppcl.devices.cpu.build import (
    CompiledKernel,
    LaunchDescriptor,
    build_kernel,
    launch_descriptor,
    lower_for_check,
    spec_for,
)
from ppcl.devices.cpu.dispatch import SplitDispatcher, fixed_unsplit
from ppcl.devices.cpu.native import NativePool, Task, copy_task
from ppcl.devices.cpu.probe import CPUInfo, configured_threads, probe_cpu
from ppcl.devices.host_memory import ALIGNMENT, BufferAllocator
from ppcl.devices.interface import (
    Allocation,
    ArgValue,
    Device,
    DeviceBuildError,
    DeviceInfo,
    DeviceProgram,
    KernelLaunch,
    NDRange,
)
from ppcl.settings import Debug

# Modules whose kernels passed the C compiler's check in this process, by id: a new build of
# the same program object skips even the cache lookup. Weak, so a module that is gone takes
# its id with it (and the table does not grow with every program ever built).
_checked_modules: weakref.WeakValueDictionary[int, ir.Module] = weakref.WeakValueDictionary()

# The local size kernels without reqd_work_group_size are checked with at build(): every
# dimension above 1, so no work-item loop is folded away.
CHECK_LOCAL_SIZE = (8, 4, 2)
MAX_WORK_GROUP_SIZE = 4096
LOCAL_MEM_SIZE = 1024 * 1024
PREFERRED_GROUP_ITEMS = 256
PARALLEL_COPY = 1024 * 1024  # a copy this large is shared by the pool's threads
EXTENSIONS = (
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_fp64",
    "cl_khr_3d_image_writes",
)

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
        host_unified_memory=True, extensions=EXTENSIONS, threads=threads,
        printf_buffer_size=PRINTF_BUFFER_BYTES, fenced_writes_cross_groups=True)


def _largest_divisor(n: int, limit: int) -> int:
    """The largest divisor of ``n`` not above ``limit``, preferring multiples of 16, then 8,
    unless the next kind is at least ``WIDER`` times as large: 1016 work-items along x (8 x 127,
    an interior range) took groups of 8, whose work-item loop is one short vector, and a blur
    ran 2x slower than in groups of 254."""
    best = {16: 0, 8: 0, 1: 1}
    for d in range(1, min(n, limit) + 1):
        if n % d == 0:
            for multiple in (16, 8, 1):
                if d % multiple == 0:
                    best[multiple] = d
    chosen = best[16]
    for multiple in (8, 1):
        if best[multiple] >= WIDER * chosen:
            chosen = best[multiple]
    return chosen


WIDER = 4


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


# Groups the pool should have to share a launch out evenly (runtime.c claims chunks of groups,
# CHUNKS_PER_THREAD a thread); a group cut for that keeps at least MIN_CUT_WIDTH work-items
# along x, two vectors of floats or more, so that its work-item loop stays a vector loop.
GROUPS_PER_THREAD = 4
MIN_CUT_WIDTH = 16


def _smallest_factor(n: int) -> int:
    d = 2
    while d * d <= n:
        if n % d == 0:
            return d
        d += 1
    return n


def cut_groups(ndrange: NDRange, threads: int) -> NDRange:
    """The NDRange in smaller groups where it has too few for ``threads`` threads
    (``GROUPS_PER_THREAD`` each): dimensions from the last to x, each local size divided by
    its smallest factors, x down to ``MIN_CUT_WIDTH`` at least. Every new local size divides
    the old, so it divides the global size. Only for kernels that cannot observe their
    grouping (``grouping_observed``) and whose work-items loop (``work_item_loops``): a few
    large groups of such a kernel (one work-item per column of a triangle, a matrix-vector
    product of 4096 rows in groups of 256) otherwise leave most of the pool's threads idle."""
    want = threads * GROUPS_PER_THREAD
    groups = ndrange.group_count
    if threads <= 1 or groups >= want:
        return ndrange
    local = list(ndrange.local_size)
    for d in reversed(range(ndrange.work_dim)):
        floor = MIN_CUT_WIDTH if d == 0 else 1
        while groups < want:
            factor = _smallest_factor(local[d]) if local[d] > 1 else 1
            if factor == 1 or local[d] // factor < floor:
                break
            local[d] //= factor
            groups *= factor
    if tuple(local) == ndrange.local_size:
        return ndrange
    return NDRange(ndrange.work_dim, ndrange.global_size, (local[0], local[1], local[2]),
                   ndrange.global_offset)


class CPULaunch(KernelLaunch):
    """One compiled kernel for one NDRange; the launch descriptor is read-only for the C code,
    so one serves every launch of the shape. The argument block is kept and updated in place
    when the arguments change; a launch that finds it in use by another thread (out-of-order
    queues, several Python threads) packs a block of its own."""

    def __init__(self, compiled: CompiledKernel, ndrange: NDRange, pool: NativePool,
                 show_plans: bool = False, runs: NDRange | None = None,
                 prior: CPULaunch | None = None) -> None:
        self.compiled = compiled
        self.ndrange = ndrange  # the launch as enqueued
        # the groups it runs in: smaller ones where the kernel cannot tell (cut_groups)
        self.runs = ndrange = ndrange if runs is None else runs
        self.static_local_bytes = compiled.local_mem_static_bytes
        self._block_static = compiled.block_static_bytes  # context arrays too large for stacks
        # split loops too small on this shape to pay for a choice run as formed (dispatch.py)
        self._fixed_unsplit = fixed_unsplit(compiled.generated.formed.body, ndrange)
        self._descriptor = launch_descriptor(ndrange, self._fixed_unsplit)
        # split loops whose choice depends on the launch: one descriptor per mask
        self.dispatcher = SplitDispatcher.of(compiled.generated.formed.body,
                                             compiled.arg_kinds, ndrange)
        # mask -> its descriptor (kept alive here) and the descriptor's address
        self._descriptors: dict[int, tuple[LaunchDescriptor, int]] = {
            self._fixed_unsplit: (self._descriptor, ctypes.addressof(self._descriptor))}
        self._last_dispatch: tuple[object, int] = (None, 0)  # argument tuple, its descriptor
        self._num_groups = ndrange.group_count
        self._entry_address = ctypes.cast(compiled.entry, ctypes.c_void_p).value
        self._pool = pool
        self._name = compiled.name
        self._block: ArgBlock | None = None
        self._task: Task | None = None
        self._task_ref: Any = None
        self._in_use = threading.Lock()
        self._steady: object = None  # the argument tuple the kept block is packed for
        # on the calling thread alone or on the pool (alone.py); one thread: always alone
        self._choice = PoolChoice() if pool.threads > 1 and self._num_groups > 1 else None
        before = prior._choice if prior is not None else None
        if self._choice is not None and before is not None:
            # a new shape of a kernel launched before: where its last shape stands (alone.py)
            assert prior is not None
            self._choice = PoolChoice.following(before, self._num_groups > prior._num_groups)
            if show_plans and before.alone:
                dims = ndrange.work_dim
                sys.stderr.write(f"// ppcl plan {self._name}: launch "
                                 f"{ndrange.global_size[:dims]} / {ndrange.local_size[:dims]}"
                                 " starts on the calling thread alone, as the kernel's last "
                                 "launch shape ran\n")
        self._show_plans = show_plans

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return local_bytes(args, self.static_local_bytes)

    def _task_for(self, block: ArgBlock) -> Task:
        choice = self._choice
        return Task(self._entry_address, ctypes.addressof(block.argv),
                    ctypes.addressof(self._descriptor), self._num_groups, block.local_bytes,
                    choice.flags() if choice is not None else 0)

    def _launch_for(self, args: Sequence[ArgValue]) -> int:
        """The address of the descriptor of the dispatcher's mask for ``args``."""
        last = self._last_dispatch
        if last[0] is args:  # the kernel's argument tuple is kept until an argument changes
            return last[1]
        dispatcher = self.dispatcher
        assert dispatcher is not None
        mask = dispatcher.mask(args) | self._fixed_unsplit
        found = self._descriptors.get(mask)
        if found is None:
            descriptor = launch_descriptor(self.runs, mask)
            found = self._descriptors[mask] = (descriptor, ctypes.addressof(descriptor))
        address = found[1]
        if dispatcher.gave_up:
            # new scalar values at every launch, each choice worth less than choosing costs:
            # the loops run as formed from now on, without a choice (dispatch.py)
            self._fixed_unsplit = mask
            self._descriptor = found[0]
            self.dispatcher = None
            if self._show_plans:
                sys.stderr.write(f"// ppcl plan {self._name}: launch {self.ndrange.global_size}"
                                 f" / {self.ndrange.local_size} runs its split loops as "
                                 "formed: new scalar values at every launch, and a choice "
                                 "saves less than choosing costs\n")
        self._last_dispatch = (args, address)
        return address

    def _shared_task(self, args: Sequence[ArgValue]) -> Any:
        """The task of the kept block, updated to ``args`` (the caller holds ``_in_use``)."""
        block = self._block
        if block is not None and (block.source is args or block.update(args)):
            return self._task_ref
        block = ArgBlock(args, self._block_static)
        self._block = block
        self._task = self._task_for(block)
        self._task_ref = ctypes.byref(self._task)
        return self._task_ref

    def run(self, args: Sequence[ArgValue]) -> None:
        # the steady launch: the arguments of the kept block, no sample due, no printf; one
        # frame and the native call (a back-to-back launch's Python was half in the layers)
        if args is self._steady and self._in_use.acquire(False):
            choice = self._choice
            pool = self._pool
            handle = pool._handle
            if args is self._steady and handle is not None \
                    and (choice is None or choice.countdown > 1):
                if choice is not None:
                    choice.countdown -= 1
                try:
                    status = pool._run(handle, self._task_ref)
                    if status:
                        self._steady_failed(status, handle, args)
                finally:
                    self._in_use.release()
                return
            self._in_use.release()
        try:
            printf = self.compiled.printf
            if printf is None:
                self._run_groups(args)
                return
            with printf.lock:  # the library's one buffer holds this launch's records only
                try:
                    self._run_groups(args)
                finally:
                    printf.print_records()
        except KeyboardInterrupt:
            # workers may still write the buffers of the abandoned launch: their owners stay
            # (the argument block holds them weakly), and so does the kernel's library
            self._pool.keep_for_good((owners(args), self.compiled))
            raise

    def _run_groups(self, args: Sequence[ArgValue]) -> None:
        if not self._in_use.acquire(blocking=False):
            block = ArgBlock(args, self._block_static)
            task = self._task_for(block)
            if self.dispatcher is not None:
                task.launch = self._launch_for(args)
            self._pool.run(ctypes.byref(task), (block, task), self._name)
            return
        try:
            kept = self._block
            if kept is not None and kept.source is args and self._last_dispatch[0] is args:
                task_ref = self._task_ref  # packed, and its split loops chosen, for args
            else:
                task_ref = self._shared_task(args)
                if self.dispatcher is not None:
                    assert self._task is not None
                    self._task.launch = self._launch_for(args)
            choice = self._choice
            if choice is not None and choice.countdown <= 1:
                self._sampled(choice, task_ref)
            else:
                if choice is not None:
                    choice.countdown -= 1
                self._pool.run(task_ref, (self._block, self._task), self._name)
            # the block is packed for args, and its split loops chosen: the next launch with
            # the same arguments may take the steady way
            if self.compiled.printf is None:
                self._steady = args
        except KeyboardInterrupt:
            self._steady = None
            self._block = None  # the abandoned launch keeps its block; later ones get another
            raise
        except BaseException:
            self._steady = None
            raise
        finally:
            self._in_use.release()

    def _steady_failed(self, status: int, handle: Any, args: Sequence[ArgValue]) -> None:
        """A steady launch's failure (the caller holds ``_in_use``), as ``run`` reports it."""
        self._steady = None
        keep = (self._block, self._task)
        try:
            self._pool.failed(status, handle, keep, self._name)
        except KeyboardInterrupt:
            self._block = None
            self._pool.keep_for_good((owners(args), self.compiled))
            raise

    def _sampled(self, choice: PoolChoice, task_ref: Any) -> None:
        """A launch measured for the choice between the pool and the calling thread alone."""
        task = self._task
        assert task is not None
        flags = task.flags = choice.sample_flags()
        self._pool.run(task_ref, (self._block, task), self._name)
        if choice.observe(flags, task.total_ns, task.caller_ns, task.caller_chunks,
                          task.chunks) and self._show_plans:
            shape = self.ndrange
            where = ("the calling thread alone" if choice.alone
                     else f"the pool's {self._pool.threads} threads")
            sys.stderr.write(f"// ppcl plan {self._name}: launch {shape.global_size} / "
                             f"{shape.local_size} runs on {where}: {choice.changed}\n")
        task.flags = choice.flags()


class CPUProgram(DeviceProgram):
    """A program for a device running C work-group functions on the host."""

    def __init__(self, module: ir.Module, options: BuildOptions, debug: Debug,
                 pool: NativePool, pipeline: Pipeline | None = None) -> None:
        self.module = module
        self.pipeline = pipeline
        self.options = options
        self.debug = debug
        self._pool = pool
        self._compiled: dict[tuple[str, object], CompiledKernel] = {}
        self._launches: dict[tuple[str, NDRange], CPULaunch] = {}
        self._latest: dict[str, CPULaunch] = {}  # each kernel's newest launch shape
        self._uncut: dict[str, str | None] = {}  # why a kernel's groups are not cut, if so
        self._lock = threading.Lock()

    def check(self) -> None:
        """Have the C compiler check the code of every kernel (lowered for a representative
        launch shape) so that what it rejects fails ``build()``, not a later launch; raises
        :class:`DeviceBuildError` naming the kernel and its source location."""
        kernels = self.module.kernels
        if not kernels:
            return
        if id(self.module) in _checked_modules:
            return
        key = (fingerprint(self.module), self.options.canonical(), str(self.pipeline or ""))
        failures: list[DeviceBuildError] = []

        def lowered() -> Iterator[tuple[str, str]]:
            for kernel in kernels:
                spec = KernelSpec(kernel.attrs.reqd_work_group_size or CHECK_LOCAL_SIZE,
                                  True, True)
                try:
                    yield kernel.name, lower_for_check(self.module, kernel.name, spec,
                                                       self.options, self.pipeline)
                except DeviceBuildError as error:
                    failures.append(error)

        try:
            if toolchain.checked(key):
                _checked_modules[id(self.module)] = self.module
                return
            rejected = toolchain.check_sources(lowered())
        except toolchain.ToolchainError as error:
            raise DeviceBuildError(str(error), error.stderr) from error
        if failures:  # every kernel's messages, the first error as the cause
            raise DeviceBuildError(str(failures[0]), "\n".join(f.log for f in failures),
                                   [d for f in failures for d in f.diagnostics]) \
                from failures[0].__cause__
        if rejected:
            locations = {kernel.name: kernel.loc for kernel in kernels}
            name, messages = rejected[0]
            raise DeviceBuildError(
                f"{locations[name]}: the C compiler rejected the code ppcl generated for "
                f"kernel '{name}' (a ppcl bug; please report it with this kernel)", messages)
        toolchain.remember_check(key)
        _checked_modules[id(self.module)] = self.module

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
            runs = self._groups_to_run(kernel_name, ndrange)
            launch = CPULaunch(self.compiled(kernel_name, runs), ndrange, self._pool,
                               self.debug.shows("plans"), runs,
                               self._latest.get(kernel_name))
            self._launches[key] = launch
            self._latest[kernel_name] = launch
        return launch

    def _groups_to_run(self, kernel_name: str, ndrange: NDRange) -> NDRange:
        """``ndrange`` in the groups the pool runs it in: smaller ones where it has too few
        for the pool and the kernel cannot tell (``cut_groups``); ``PPCL_DEBUG=plans`` says
        which, and why a kernel keeps too few groups."""
        threads = self._pool.threads
        cut = cut_groups(ndrange, threads)
        if cut is ndrange:
            return ndrange
        why = self._uncut.get(kernel_name, "")
        if why == "":
            why = grouping_observed(self.module, kernel_name)
            if why is None and not work_item_loops(self.module, kernel_name):
                # each group's chunk costs the pool a claim and a cache line: a few
                # statements a work-item do not pay for more of them
                why = "a work-item runs no loop, too little work to share in smaller groups"
            self._uncut[kernel_name] = why
        if self.debug.shows("plans"):
            dims = ndrange.work_dim
            shape = f"launch {ndrange.global_size[:dims]} / {ndrange.local_size[:dims]}"
            if why is None:
                what = (f"runs in groups of {cut.local_size[:dims]} ({cut.group_count} groups "
                        f"for {threads} threads, not {ndrange.group_count}): the kernel "
                        "cannot tell its grouping")
            else:
                what = f"keeps its {ndrange.group_count} groups on {threads} threads: {why}"
            sys.stderr.write(f"// ppcl plan {kernel_name}: {shape} {what}\n")
        return cut if why is None else ndrange


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

    def bytes_in_use(self) -> int:
        return self.allocator.bytes_in_use()

    def submit(self, task: Callable[[], None]) -> None:
        self.executor.submit(task)

    def default_local_size(self, global_size: Size3, work_dim: int) -> Size3:
        info = self.info
        return choose_local_size(global_size, work_dim, info.max_work_group_size,
                                 info.max_work_item_sizes, info.threads)


class CPUDevice(HostDevice):
    """The host processor, its work-groups spread over a pool of ``threads`` threads."""

    concurrent_launches = True  # a launch finding the pool busy runs on its own thread

    def __init__(self, threads: int | None = None, kind: str = "cpu") -> None:
        self.cpu = probe_cpu()
        count = configured_threads(threads)
        super().__init__(host_device_info(self.cpu, f"{kind}-{self.cpu.model}", count))
        self.pool = NativePool(count)

    def transfer(self, target: np.ndarray, source: np.ndarray) -> None:
        """A large copy between contiguous ranges that do not overlap runs on the pool, its
        blocks shared by the threads: one thread's memcpy reaches a fraction of the memory
        bandwidth of many cores (4 MiB took 0.35 ms on one of 16 cores, a kernel reading and
        writing as much 0.1 ms), and a program's writes and reads of its data are often most
        of its time on many cores. Others are numpy's copy."""
        nbytes = target.nbytes
        # the same bytes numpy's copy would write: same shape and type, both contiguous
        if self.pool.threads > 1 and nbytes >= PARALLEL_COPY and source.shape == target.shape \
                and source.dtype == target.dtype \
                and target.flags.c_contiguous and source.flags.c_contiguous:
            dst, src = target.ctypes.data, source.ctypes.data
            if dst + nbytes <= src or src + nbytes <= dst:
                task, keep = copy_task(dst, src, nbytes)
                self.pool.run(task, (keep, target, source), "a copy")
                return
        target[...] = source

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> CPUProgram:
        program = CPUProgram(module, options, debug, self.pool)
        program.check()
        return program
