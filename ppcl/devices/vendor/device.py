"""A vendor's OpenCL device driven through pyopencl: ppcl's front end, the vendor's compiler.

A program is checked and lowered by ppcl's front end (so its diagnostics are ppcl's), printed
as OpenCL C (``compiler/codegen/opencl.py``) with the preprocessor already applied, and built by
the vendor's driver with the build options that are not the preprocessor's. Buffers are host
memory, each wrapped in a vendor buffer over the same bytes (``USE_HOST_PTR``); a launch maps
and unmaps its buffers before the kernel, and those it may write after it, which is where
OpenCL makes host and device copies agree (free on a CPU driver, whole-buffer transfers on a
GPU driver).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ppcl.compiler.analysis.buffers import buffer_accesses
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import Size3
from ppcl.devices.commands import CommandExecutor
from ppcl.devices.cpu.device import choose_local_size
from ppcl.devices.host_memory import ALIGNMENT, BufferAllocator
from ppcl.devices.interface import (
    Allocation,
    ArgValue,
    BufferArg,
    Device,
    DeviceBuildError,
    DeviceInfo,
    DeviceProgram,
    KernelLaunch,
    LocalArg,
    NDRange,
)
from ppcl.settings import Debug

# Build options the vendor's compiler sees: the preprocessor's (-D, -U, -I) were applied by ppcl.
VENDOR_FLAGS = {
    "-cl-fast-relaxed-math": "fast_relaxed_math", "-cl-mad-enable": "mad_enable",
    "-cl-no-signed-zeros": "no_signed_zeros",
    "-cl-unsafe-math-optimizations": "unsafe_math_optimizations",
    "-cl-finite-math-only": "finite_math_only", "-cl-denorms-are-zero": "denorms_are_zero",
    "-cl-single-precision-constant": "single_precision_constant", "-cl-opt-disable": "opt_disable",
}
_KINDS = {2: "cpu", 4: "gpu", 8: "accelerator"}


def vendor_options(options: BuildOptions) -> str:
    words = [flag for flag, attr in VENDOR_FLAGS.items() if getattr(options, attr)]
    if options.cl_std is not None:
        words.append(f"-cl-std={options.cl_std}")
    return " ".join(words)


class HostAllocation(Allocation):
    """Host bytes and the vendor buffer over them: ``memory`` from the device's allocator, or
    (``memory`` None) a program's own array (``USE_HOST_PTR``)."""

    def __init__(self, cl: Any, context: Any, array: Any, memory: Allocation | None = None
                 ) -> None:
        self.array = array
        self.address = int(array.ctypes.data)
        access = cl.mem_flags.READ_WRITE if array.flags.writeable else cl.mem_flags.READ_ONLY
        self.buffer = cl.Buffer(context, access | cl.mem_flags.USE_HOST_PTR, hostbuf=array)
        self.subs: dict[tuple[int, int], Any] = {}
        self._memory = memory

    def release(self) -> None:
        self.subs.clear()
        self.buffer.release()
        if self._memory is not None:  # the bytes go back to the allocator's pool
            self._memory.release()


class VendorLaunch(KernelLaunch):
    def __init__(self, device: VendorDevice, kernel: Any, ndrange: NDRange,
                 written: tuple[bool, ...]) -> None:
        self.ndrange = ndrange
        self._written = written  # per argument: a buffer the kernel may write
        self.static_local_bytes = int(kernel.get_work_group_info(
            device.cl.kernel_work_group_info.LOCAL_MEM_SIZE, device.vendor_device))
        self._device = device
        self._kernel = kernel
        self._lock = threading.Lock()
        dims = ndrange.work_dim
        self._global = ndrange.global_size[:dims]
        self._local = ndrange.local_size[:dims]
        self._offset = ndrange.global_offset[:dims] if any(ndrange.global_offset) else None

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return self.static_local_bytes + sum(a.nbytes for a in args if isinstance(a, LocalArg))

    def run(self, args: Sequence[ArgValue]) -> None:
        cl, queue = self._device.cl, self._device.queue()
        mapped_before: dict[int, Any] = {}  # each distinct buffer once, by identity
        mapped_after: dict[int, Any] = {}
        values: list[Any] = []
        for index, arg in enumerate(args):
            if isinstance(arg, BufferArg):
                buffer = self._device.vendor_buffer(arg)
                values.append(buffer)
                if buffer is not None:
                    mapped_before[id(buffer)] = buffer
                    if self._written[index]:
                        mapped_after[id(buffer)] = buffer
            elif isinstance(arg, LocalArg):
                values.append(cl.LocalMemory(arg.nbytes))
            else:
                values.append(np.frombuffer(arg.data, dtype=np.uint8))
        # the maps do not block: the in-order queue orders them around the kernel, and the one
        # finish below is the only wait (a blocking map each cost a round trip to the driver)
        to_device = self._device.to_device_flags
        with self._lock:  # a kernel object holds one set of arguments
            self._kernel.set_args(*values)
            for buffer in mapped_before.values():  # the host's bytes to the device
                _map_and_unmap(cl, queue, buffer, to_device)
            cl.enqueue_nd_range_kernel(queue, self._kernel, self._global, self._local,
                                       self._offset)
        for buffer in mapped_after.values():  # and what the kernel may write, back
            _map_and_unmap(cl, queue, buffer, cl.map_flags.READ)
        queue.finish()


def _map_and_unmap(cl: Any, queue: Any, buffer: Any, flags: int) -> None:
    mapped, _ = cl.enqueue_map_buffer(queue, buffer, flags, 0, (buffer.size,), np.uint8,
                                      is_blocking=False)
    mapped.base.release()


def opencl_version(vendor_device: Any) -> tuple[int, int]:
    """The OpenCL version a vendor's device reports (``"OpenCL 3.0 CUDA"``: (3, 0))."""
    words = str(vendor_device.version).split()
    major, _, minor = words[1].partition(".") if len(words) > 1 else ("0", "", "0")
    try:
        return int(major), int(minor.split("-")[0] or 0)
    except ValueError:
        return 0, 0


def supported(vendor_device: Any) -> bool:
    """Whether ppcl can drive the device: OpenCL 1.2 or later, whose ``WRITE_INVALIDATE_REGION``
    maps are how a launch hands the host's bytes to the device (``VendorLaunch.run``). A
    ``WRITE`` map first copies the device's bytes to the host, as a map must show the buffer's
    contents, and so overwrote what the host had written since the last launch on a GPU
    driver (NVIDIA's: a buffer written by ``enqueue_copy`` kept its old values)."""
    return opencl_version(vendor_device) >= (1, 2)


class VendorProgram(DeviceProgram):
    def __init__(self, device: VendorDevice, module: ir.Module, options: BuildOptions) -> None:
        self._device = device
        self._module = module
        self.source = print_opencl(module)
        cl = device.cl
        try:
            self._program = cl.Program(device.context, self.source).build(
                options=vendor_options(options), devices=[device.vendor_device])
        except cl.RuntimeError as error:
            raise DeviceBuildError(
                f"the {device.info.vendor} compiler rejected the OpenCL C ppcl printed "
                "(a ppcl bug, or a limit of that driver)", str(error)) from error
        self._launches: dict[tuple[str, NDRange], VendorLaunch] = {}

    def prepare(self, kernel_name: str, ndrange: NDRange) -> VendorLaunch:
        key = (kernel_name, ndrange)
        launch = self._launches.get(key)
        if launch is None:
            kernel = self._device.cl.Kernel(self._program, kernel_name)
            launch = VendorLaunch(self._device, kernel, ndrange, self._written(kernel_name))
            self._launches[key] = launch
        return launch

    def _written(self, kernel_name: str) -> tuple[bool, ...]:
        """Per parameter: whether the kernel may write through it (the analysis errs towards
        yes), so a launch maps back only what may have changed."""
        function = next(d for d in self._module.decls if isinstance(d, ir.Function)
                        and d.is_kernel and d.name == kernel_name)
        accesses = buffer_accesses(function)
        return tuple(p.name in accesses and accesses[p.name].writes for p in function.params)


class VendorDevice(Device):
    """A pyopencl device driven through ppcl, in ``context`` (a pyopencl context holding it,
    such as a program's own) or in a context of its own."""

    def __init__(self, cl: Any, vendor_device: Any, context: Any = None) -> None:
        self.cl = cl
        self.vendor_device = vendor_device
        self.context = context if context is not None else cl.Context([vendor_device])
        self.info = self._describe(self.vendor_device)
        # the map whose unmap copies the host's bytes to the device, copying nothing back
        self.to_device_flags = int(cl.map_flags.WRITE_INVALIDATE_REGION)
        self.executor = CommandExecutor(2)
        self._threads = threading.local()
        # host memory as the CPU device's: temporaries made and released every frame reuse
        # their pages instead of paying fresh pages' faults on first touch (inside kernels)
        self.allocator = BufferAllocator()
        self._allocations: dict[int, HostAllocation] = {}
        # the vendor buffers over programs' own host memory (USE_HOST_PTR), while it lives
        self._host_buffers: weakref.WeakKeyDictionary[Any, HostAllocation] = \
            weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    @staticmethod
    def _describe(d: Any) -> DeviceInfo:
        sizes = list(d.max_work_item_sizes) + [1, 1, 1]
        return DeviceInfo(
            name=d.name.strip(), vendor=d.vendor.strip(), kind=_KINDS.get(d.type & 14, "gpu"),
            compute_units=d.max_compute_units, clock_mhz=d.max_clock_frequency,
            max_work_group_size=d.max_work_group_size,
            max_work_item_sizes=(sizes[0], sizes[1], sizes[2]),
            local_mem_size=d.local_mem_size, global_mem_size=d.global_mem_size,
            max_mem_alloc_size=d.max_mem_alloc_size,
            global_mem_cache_size=d.global_mem_cache_size,
            cache_line=max(1, d.global_mem_cacheline_size),
            vector_bytes=4 * max(1, d.preferred_vector_width_float),
            mem_base_addr_align=max(ALIGNMENT, d.mem_base_addr_align // 8),
            host_unified_memory=bool(d.host_unified_memory),
            extensions=tuple(d.extensions.split()), threads=1,
            fenced_writes_cross_groups=_KINDS.get(d.type & 14) == "cpu")

    def queue(self) -> Any:
        """The calling thread's queue on the vendor's device."""
        queue = getattr(self._threads, "queue", None)
        if queue is None:
            queue = self.cl.CommandQueue(self.context, self.vendor_device)
            self._threads.queue = queue
        return queue

    def vendor_buffer(self, arg: BufferArg) -> Any:
        """The vendor buffer (or sub-buffer) of a buffer argument; None for NULL."""
        if not arg.address:
            return None
        owner = arg.owner
        root = getattr(owner, "parent", None) or owner
        allocation = self._allocations.get(int(root.address))
        if allocation is None:  # not allocated here: the program's own memory (USE_HOST_PTR)
            allocation = self._host_allocation(root)
        offset, size = arg.address - allocation.address, int(owner.size)
        if offset == 0 and size == allocation.array.nbytes:
            return allocation.buffer
        key = (offset, size)
        with self._lock:
            sub = allocation.subs.get(key)
            if sub is None:
                sub = allocation.buffer.get_sub_region(offset, size)
                allocation.subs[key] = sub
        return sub

    def _host_allocation(self, root: Any) -> HostAllocation:
        with self._lock:
            allocation = self._host_buffers.get(root)
            if allocation is None:
                data = root._data
                allocation = HostAllocation(self.cl, self.context, data)
                self._host_buffers[root] = allocation
        return allocation

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> VendorProgram:
        return VendorProgram(self, module, options)

    def default_local_size(self, global_size: Size3, work_dim: int) -> Size3:
        info = self.info
        return choose_local_size(global_size, work_dim, info.max_work_group_size,
                                 info.max_work_item_sizes, info.compute_units)

    def allocate(self, nbytes: int) -> Allocation:
        memory = self.allocator.allocate(nbytes)
        allocation = HostAllocation(self.cl, self.context, memory.array, memory)
        with self._lock:
            self._allocations[allocation.address] = allocation
        return _Tracked(self, allocation)

    def bytes_in_use(self) -> int:
        return self.allocator.bytes_in_use()

    def forget(self, allocation: HostAllocation) -> None:
        with self._lock:
            self._allocations.pop(allocation.address, None)

    def submit(self, task: Callable[[], None]) -> None:
        self.executor.submit(task)


class _Tracked(Allocation):
    """An allocation that leaves the device's table when released."""

    def __init__(self, device: VendorDevice, allocation: HostAllocation) -> None:
        self._device = device
        self._allocation = allocation
        self.array = allocation.array
        self.address = allocation.address

    def release(self) -> None:
        self._device.forget(self._allocation)
        self._allocation.release()
