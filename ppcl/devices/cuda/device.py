"""The CUDA device: one NVIDIA GPU, kernels printed as CUDA C++ and compiled by NVRTC.

A work-item is a CUDA thread and a work-group a block, so a kernel needs none of the CPU's
work-group formation: the front end's IR is printed as it is (``compiler/codegen/cuda.py``) and
the whole program is one NVRTC unit, compiled at ``build()`` (cubins cached on disk) and loaded
as one module: quickly, with a fully optimized module following on a thread (``CUDAProgram``).
A launch is one ``cuLaunchKernel`` on the calling thread's stream (every command
thread has a stream of its own, so out-of-order queues and several queues overlap on the GPU)
followed by a wait for that stream, since the runtime's commands complete when ``run``
returns; the two are one foreign call into a few lines of C (``launch.c``), which saves about a
microsecond of ctypes a launch where a C compiler built it. A launch runs the optimized module's kernel once that module is loaded, and if its
buffers do not overlap, the kernel's ``__noalias`` copy (restrict pointers) there, chosen once
per set of argument values.

Memory is CUDA managed memory: the runtime and the program see a buffer's bytes as a host
array (buffers made from host data, maps, the host side of copies) while kernels use the same
address, the driver moving pages to where they are touched. Copies and fills of whole rows go
through the driver's copy engines; other views are copied by numpy. An allocation larger than
the GPU's free memory is refused (managed memory beyond it can hang the GPU).

A buffer over a program's own host array (``USE_HOST_PTR``) is not memory the GPU can reach:
a kernel touching it faults, and a fault ends the GPU's context for the process. Such a buffer
gets a mirror in managed memory, made at its first launch and freed with the buffer: a launch
copies the host bytes to the mirror, runs the kernel on the mirror and copies back what the
kernel may write (``buffer_accesses``), so the program sees its array change as it would on the
CPU device, where the kernel works on the array itself.

An image argument is the address of the image's descriptor (``ir.layout.IMAGE_DESCRIPTOR``),
which the runtime keeps in host memory: the device copies it into managed memory once per image
and passes that copy. An image over host memory gets a mirror as such a buffer does, and its
descriptor copy points at the mirror; a write-only or read-write image is copied back.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ppcl.compiler import toolchain
from ppcl.compiler.analysis.buffers import buffer_accesses
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.codegen.cuda import cuda_unit, kernel_symbol, noalias_variant
from ppcl.compiler.deepstack import run_deep_if_needed
from ppcl.compiler.frontend import prepare as prepare_front_end
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import IMAGE_DESCRIPTOR_BYTES, Size3, align_up
from ppcl.compiler.ir.types import ImageType
from ppcl.devices.commands import CommandExecutor
from ppcl.devices.cuda.driver import (
    ATTRIBUTES,
    CTX_SCHED_SPIN,
    CUDA_SUCCESS,
    FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
    FUNC_SHARED_SIZE_BYTES,
    KERNEL_FAULTS,
    LIMIT_PRINTF_FIFO_SIZE,
    MEM_ATTACH_GLOBAL,
    STREAM_NON_BLOCKING,
    CUDAError,
    Driver,
    load_driver,
)
from ppcl.devices.cuda.nvrtc import (
    Cubin,
    NVRTCError,
    cached_cubin,
    cubin_from_cache,
    nvrtc_version_tuple,
    start_warm_up,
    wait_for_warm_up,
)
from ppcl.devices.interface import (
    Allocation,
    ArgValue,
    BufferArg,
    Device,
    DeviceBuildError,
    DeviceInfo,
    DeviceProgram,
    KernelFault,
    KernelLaunch,
    LocalArg,
    NDRange,
)
from ppcl.settings import NO_DEBUG, Debug

MEM_BASE_ADDR_ALIGN = 128  # bytes: a sub-buffer starts on a whole cache line
LOCAL_ARG_ALIGN = 128  # each __local argument starts at a multiple of this in shared memory
DEFAULT_SHARED_LIMIT = 48 * 1024  # dynamic shared memory above this needs an opt-in per kernel
PREFERRED_GROUP_ITEMS = 256
WARP = 32
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


class _LaunchCall(ctypes.Structure):
    """``ppcl_cuda_call`` of ``launch.c``: a launch's driver call and the wait after it."""

    _fields_ = [("launch", ctypes.c_void_p), ("wait", ctypes.c_void_p),
                ("function", ctypes.c_void_p), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("params", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def native_launch() -> Callable[[Any], int] | None:
    """``ppcl_cuda_launch_wait`` of ``launch.c``, built once through the kernel cache; None
    where no C compiler builds it, and a launch then makes its two driver calls from Python."""
    try:
        library = toolchain.build_library(Path(__file__).with_name("launch.c").read_text(),
                                          key_parts=("ppcl-cuda-launch",))
    except toolchain.ToolchainError:
        return None
    function: Callable[[Any], int] = library.ppcl_cuda_launch_wait
    function.restype = ctypes.c_int  # type: ignore[attr-defined]
    return function


def _address(function: Any) -> int:
    address: int = ctypes.cast(function, ctypes.c_void_p).value or 0
    return address


class _NDRangeArg(ctypes.Structure):
    """``ppcl_ndrange`` of ``ppcl_cuda.h``: the launch's global offset and work dimension."""

    _fields_ = [("offset", ctypes.c_uint64 * 3), ("work_dim", ctypes.c_uint32),
                ("pad", ctypes.c_uint32)]


def _largest_divisor(n: int, limit: int, multiple: int) -> int:
    """The largest divisor of ``n`` not above ``limit``, a multiple of ``multiple`` if one is."""
    best_multiple, best = 0, 1
    for d in range(1, min(n, limit) + 1):
        if n % d == 0:
            best = d
            if d % multiple == 0:
                best_multiple = d
    return best_multiple or best


def gpu_local_size(global_size: Size3, work_dim: int, max_group: int, max_items: Size3) -> Size3:
    """A local size for ``local_size=None`` on a GPU: dimension 0 as wide as a warp or more
    (whole warps read consecutive addresses), the rest of ``PREFERRED_GROUP_ITEMS`` given to the
    next dimensions, every entry a divisor of the global size."""
    budget = min(max_group, PREFERRED_GROUP_ITEMS)
    local = [1, 1, 1]
    for d in range(work_dim):
        limit = min(budget, max_items[d])
        if d == 0 and work_dim > 1:
            limit = min(limit, WARP)
        local[d] = _largest_divisor(global_size[d], limit, WARP if d == 0 else 1)
        budget //= local[d]
    return local[0], local[1], local[2]


class ManagedAllocation(Allocation):
    def __init__(self, device: CUDADevice, nbytes: int) -> None:
        pointer = ctypes.c_uint64()
        device.driver.cuMemAllocManaged(ctypes.byref(pointer), nbytes, MEM_ATTACH_GLOBAL)
        self._device = device
        self.address = pointer.value
        self.array = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(self.address))
        self.nbytes = nbytes
        device.managed[self.address] = nbytes

    def release(self) -> None:
        if self.address:
            self._device.managed.pop(self.address, None)
            self._device.current()
            self._device.driver.cuMemFree_v2(self.address)
            self._device.allocated -= self.nbytes
            self.address = 0


def _release(allocations: Sequence[Allocation | None]) -> None:
    for allocation in allocations:
        if allocation is not None:
            allocation.release()


def buffers_disjoint(args: Sequence[ArgValue]) -> bool:
    """Whether no two buffer arguments of a launch share a byte (sub-buffers of one buffer
    may), so that the kernel's ``__noalias`` copy computes what the kernel does."""
    spans = []
    for arg in args:
        if isinstance(arg, BufferArg) and arg.address:
            size = getattr(arg.owner, "size", None)
            if not isinstance(size, int):
                return False
            spans.append((arg.address, arg.address + size))
    spans.sort()
    return all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))


# a buffer over host memory during a launch: (host bytes, the mirror's bytes, kernel may write)
_Sync = tuple[np.ndarray, np.ndarray, bool]


class CUDALaunch(KernelLaunch):
    """One kernel over one NDRange; the packed parameters are kept while the argument tuple is
    the same, so a repeated launch is one driver call and a wait."""

    def __init__(self, device: CUDADevice, program: CUDAProgram, function: int, name: str,
                 ndrange: NDRange, static_local_bytes: int) -> None:
        self.ndrange = ndrange
        self.static_local_bytes = static_local_bytes
        self._device = device
        self._program = program
        self._function = function
        self._name = name
        self._images = program.images(name)  # per parameter: whether it is an image
        self._grid = ndrange.num_groups
        self._block = ndrange.local_size
        nd = _NDRangeArg()
        nd.offset[:] = list(ndrange.global_offset)
        nd.work_dim = ndrange.work_dim
        self._nd = nd
        self._packed: tuple[Any, ...] | None = None
        self._dynamic_opt_in: dict[int, int] = {}  # function -> dynamic shared bytes allowed
        self._launch = device.driver.raw("cuLaunchKernel")
        self._lock = threading.Lock()

    @staticmethod
    def _dynamic_bytes(args: Sequence[ArgValue]) -> int:
        total = 0
        for arg in args:
            if isinstance(arg, LocalArg):
                total = align_up(total, LOCAL_ARG_ALIGN) + arg.nbytes
        return total

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return self.static_local_bytes + self._dynamic_bytes(args)

    @property
    def settled(self) -> bool:
        return self._program.settled

    def settle(self) -> None:
        self._program.settle()

    def _pack(self, args: Sequence[ArgValue]
              ) -> tuple[ctypes.Array[ctypes.c_void_p], int, list[object], list[_Sync]]:
        holders: list[object] = [self._nd]
        syncs: list[_Sync] = []
        offset = 0
        for index, arg in enumerate(args):
            if isinstance(arg, BufferArg) and self._images[index]:
                address, mirrored = self._device.image_argument(arg)
                if mirrored is not None:
                    written = self._program.written(self._name)
                    syncs.append((*mirrored, written[index]))
                holders.append(ctypes.c_uint64(address))
            elif isinstance(arg, BufferArg):
                address = arg.address
                mirrored = self._device.mirror(arg)
                if mirrored is not None:
                    host, shadow = mirrored
                    address = int(shadow.ctypes.data)
                    written = self._program.written(self._name)
                    syncs.append((host, shadow, written[index]))
                holders.append(ctypes.c_uint64(address))
            elif isinstance(arg, LocalArg):
                offset = align_up(offset, LOCAL_ARG_ALIGN)
                holders.append(ctypes.c_uint32(offset))
                offset += arg.nbytes
            else:
                holders.append(ctypes.create_string_buffer(arg.data, max(1, len(arg.data))))
        argv = (ctypes.c_void_p * len(holders))(
            *[ctypes.addressof(h) for h in holders])  # type: ignore[arg-type]
        return argv, offset, holders, syncs

    def _call_for(self, args: Sequence[ArgValue], thread: int) -> tuple[Any, ...]:
        """The launch call's arguments, made once per argument tuple and calling thread."""
        with self._lock:
            argv, dynamic, holders, syncs = self._pack(args)
            optimized_ready = self._program.optimized_ready
            function = self._function
            if optimized_ready:
                noalias = None
                if buffers_disjoint(args):
                    noalias = self._program.optimized_function(self._name, noalias=True)
                function = (noalias or self._program.optimized_function(self._name, False)
                            or function)
            if dynamic > self._dynamic_opt_in.get(function, DEFAULT_SHARED_LIMIT):
                self._device.driver.cuFuncSetAttribute(
                    function, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic)
                self._dynamic_opt_in[function] = dynamic
            stream = self._device.stream()
            handle = ctypes.c_void_p(stream)
            grid, block = self._grid, self._block
            call = (ctypes.c_void_p(function), ctypes.c_uint(grid[0]),
                    ctypes.c_uint(grid[1]), ctypes.c_uint(grid[2]), ctypes.c_uint(block[0]),
                    ctypes.c_uint(block[1]), ctypes.c_uint(block[2]), ctypes.c_uint(dynamic),
                    handle, argv, None)
            wait = self._device.synchronizer()
            native = native_launch()
            combined = None
            if native is not None:
                record = _LaunchCall(_address(self._launch), _address(wait), function,
                                     (ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block),
                                     dynamic, stream, ctypes.addressof(argv))
                holders.append(record)
                combined = ctypes.byref(record)
            self._packed = (args, thread, call, stream, holders, optimized_ready, syncs,
                            wait, handle, native, combined)
            return self._packed

    def _failed(self, code: int) -> NoReturn:
        """Raise for a launch's driver error (negative) or its wait's (positive)."""
        if code < 0:
            raise RuntimeError(f"kernel '{self._name}' could not be launched on the GPU: "
                               f"{self._device.driver.error_name(-code)} ({-code})")
        self._device.wait_failed(code, self._name)

    def run(self, args: Sequence[ArgValue]) -> None:
        # the kept call is read without the lock: a thread that packs anew replaces the tuple
        # whole, and the old one stays alive while this launch holds it
        packed = self._packed
        thread = threading.get_ident()
        if (packed is None or packed[0] is not args or packed[1] != thread
                or packed[5] != self._program.optimized_ready):
            packed = self._call_for(args, thread)
        syncs = packed[6]
        for host, shadow, _ in syncs:  # the program's host bytes to their mirrors
            self._device.copy_async(shadow, host, packed[3])
        native = packed[9]
        if native is not None:
            code = native(packed[10])  # launch and wait: a launch's failure comes negative
        else:
            code = -self._launch(*packed[2])
            if code == CUDA_SUCCESS:
                code = packed[7](packed[8])  # the wait for the stream, as ``CUDADevice.wait``
        if code != CUDA_SUCCESS:
            self._failed(code)
        if syncs:
            for host, shadow, written in syncs:  # and what the kernel may have written, back
                if written and host.flags.writeable:
                    self._device.copy_async(host, shadow, packed[3])
            self._device.wait(packed[3], "a copy to a host array")
            if self._packed is packed:
                # the kept call would keep the program's host arrays alive after it dropped
                # them; a launch that copies them at every run gains little from keeping it
                self._packed = None


def _nvrtc_at_least(version: tuple[int, int]) -> bool:
    """Whether NVRTC is ``version`` or later (False where cupy is missing)."""
    try:
        return nvrtc_version_tuple() >= version
    except ImportError:
        return False


def nvrtc_options(options: BuildOptions) -> list[str]:
    """NVRTC's options for a program built with ``options``. Without ``-cl-mad-enable`` (or an
    option implying it) NVRTC does not contract: it would contract ``a * b`` and a later ``+``
    into one FMA across statements too, which OpenCL's FP_CONTRACT does not allow, and a kernel
    the overlay fused from two (a product stored by one, added by the next) gave other bits
    than the two. Within one expression the printer writes the FMA itself (``cuda_binary``).
    ``--split-compile=0`` (NVRTC 12.4 on) runs NVRTC's optimizer on all cores: the 16 kernels
    of ``ppcl bench`` compiled in 0.24 s against 0.37-0.46 s on the GPU machine's 16 cores.
    ``-pch`` (12.8 on) keeps the parsed header of the first unit of a process (the warm-up's)
    for the units after it, in NVRTC's own files that it removes at exit: 30-50 ms less for
    each unit; the cubin is the same."""
    flags = ["--std=c++17", "-default-device"]
    if _nvrtc_at_least((12, 4)):
        flags.append("--split-compile=0")
    if _nvrtc_at_least((12, 8)):
        flags += ["-pch", "--pch-messages=false"]
    if options.fast_relaxed_math or options.unsafe_math_optimizations:
        flags.append("--use_fast_math")
    if not options.mad_enable:
        flags.append("--fmad=false")
    if options.opt_disable:
        flags.append("--dopt=off")
    return flags


QUICK_FLAG = "--Ofast-compile=max"
BACKGROUND_NICE = 10  # how much lower the optimized modules' compiles run (``CUDAProgram``)


def quick_options(options: BuildOptions) -> list[str] | None:
    """The options of a program's first module, which ``build()`` waits for: NVRTC's options
    and ``--Ofast-compile=max`` (12.9 on), which leaves out most of the optimizer. With
    ``min`` (the costliest passes left out) the 6-kernel program of ``benchmarks/gpu.py``
    compiled in 0.11-0.14 s against 0.20-0.25 s fully optimized, and ``ppcl bench``'s 16
    kernels in 0.26-0.30 s against 0.41-0.57 s; ``max`` took the first program's cold
    build from 0.12-0.15 to 0.11-0.13 s on the H100 machine (NVRTC started by the context
    in both). Its code is slower, so it is a
    first tier only: the fully optimized module replaces it once compiled (``CUDAProgram``).
    None where there is no such option, or under ``-cl-opt-disable``."""
    if options.opt_disable or not _nvrtc_at_least((12, 9)):
        return None
    return [*nvrtc_options(options), QUICK_FLAG]


class CUDAProgram(DeviceProgram):
    """A program's CUDA module: every kernel compiled in one NVRTC unit at build, quickly where
    NVRTC can (``quick_options``). The fully optimized unit, which also has the ``__noalias``
    copies of its kernels, compiles meanwhile on a thread of its own into a second module, so
    that it adds nothing to the build: launches move to it once it is loaded, as a JIT moves a
    function up a tier. Where the first module is fully optimized already, the second is made
    only for the ``__noalias`` copies."""

    def __init__(self, device: CUDADevice, module: ir.Module, options: BuildOptions,
                 debug: Debug = NO_DEBUG) -> None:
        self._device = device
        self._kernels = {k.name: k for k in module.kernels}
        self._debug = debug
        try:
            # a deep expression (a sum of thousands of terms) recurses deeply in the printer
            self.source = run_deep_if_needed(cuda_unit, module, noalias=False)
        except CodegenError as error:
            raise DeviceBuildError(f"the CUDA device cannot compile this program: {error}") \
                from error
        self._options = nvrtc_options(options)
        quick = quick_options(options)
        started = time.perf_counter()
        optimized_source, cubin = self._optimized_in_cache(module) if quick else (None, None)
        optimized = cubin is not None  # built before: the optimized module at once
        self.quick = quick is not None and not optimized
        first_options = quick if quick is not None and not optimized else self._options
        if cubin is None:
            try:
                cubin = cached_cubin(self.source, first_options, device.arch)
            except NVRTCError as error:
                raise DeviceBuildError(
                    "NVRTC rejected the CUDA code ppcl generated for this program (a ppcl "
                    "bug; please report it with the program)", error.log) from error
        self._report(cubin, first_options, started)
        self.log = cubin.log
        self.cached = cubin.cached
        self._module = self._load(cubin.data)
        self._functions: dict[str, tuple[int, int]] = {}
        self._launches: dict[tuple[str, NDRange], CUDALaunch] = {}
        self._written: dict[str, tuple[bool, ...]] = {}
        self._lock = threading.Lock()
        self._optimized_module: int | None = None
        self._optimized: dict[tuple[str, bool], int | None] = {}
        self.optimized_error: str | None = None
        self._optimizer: threading.Thread | None = None
        if optimized:
            self._optimized_module = self._module
        elif self.quick or any(noalias_variant(k) is not None for k in module.kernels):
            # not a daemon: a thread still in NVRTC or the driver when the interpreter shuts
            # down crashed the process at exit (a short program ended with SIGSEGV)
            self._optimizer = threading.Thread(
                target=self._build_optimized, args=(module, optimized_source), daemon=False,
                name="ppcl-cuda-optimized")
            self._optimizer.start()

    def _optimized_in_cache(self, module: ir.Module) -> tuple[str | None, Cubin | None]:
        """The optimized unit's source and, when a build before compiled it, its cubin from
        the cache: a program built again loads its optimized module at once, with no quick
        tier (the unit printed here is the one the optimizer's thread compiles otherwise)."""
        try:
            source = run_deep_if_needed(cuda_unit, module, noalias=True)
        except CodegenError:
            return None, None
        return source, cubin_from_cache(source, self._options, self._device.arch)

    def _report(self, cubin: Cubin, options: Sequence[str], started: float) -> None:
        """What ``PPCL_DEBUG=cc`` shows of a unit's compile (``time``: how long it took)."""
        seconds = time.perf_counter() - started
        how = "cached" if cubin.cached else f"built in {seconds * 1000:.0f} ms"
        tier = "first module" if QUICK_FLAG in options else "optimized module"
        if self._debug.shows("cc"):
            print(f"// ppcl nvrtc {tier} of {', '.join(self._kernels)} ({how}): "
                  f"{' '.join(options)} --gpu-architecture={self._device.arch}",
                  file=sys.stderr)
        if self._debug.shows("time"):
            print(f"[ppcl] nvrtc {tier}: {seconds * 1000:.2f} ms", file=sys.stderr)

    def _load(self, cubin: bytes) -> int:
        self._device.current()
        handle = ctypes.c_void_p()
        self._device.driver.cuModuleLoadData(ctypes.byref(handle), cubin)
        assert handle.value is not None
        return handle.value

    def _build_optimized(self, module: ir.Module, source: str | None) -> None:
        """Compile and load the fully optimized unit with the ``__noalias`` copies (on its own
        thread); if that fails, launches keep the first module. The thread runs at a lower
        priority (Linux: a thread's nice value is its own, and NVRTC's worker threads inherit
        it), so that the first module of a program built next is not slowed by this one."""
        started = time.perf_counter()
        if sys.platform.startswith("linux"):
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
            except OSError:
                pass
        try:
            if source is None:
                source = run_deep_if_needed(cuda_unit, module, noalias=True)
            cubin = cached_cubin(source, self._options, self._device.arch)
            self._report(cubin, self._options, started)
            self._optimized_module = self._load(cubin.data)
        except Exception as error:  # noqa: BLE001 - an optimization may fail, never the program
            self.optimized_error = f"{type(error).__name__}: {error}"

    @property
    def optimized_ready(self) -> bool:
        return self._optimized_module is not None

    @property
    def settled(self) -> bool:
        """Whether the optimized module's build has ended (loaded, or failed and never will)."""
        return self._optimizer is None or not self._optimizer.is_alive()

    def settle(self) -> None:
        """Wait for the optimized module's build to end."""
        if self._optimizer is not None:
            self._optimizer.join()

    def optimized_function(self, kernel_name: str, noalias: bool) -> int | None:
        """The kernel (its ``__noalias`` copy when ``noalias``) in the optimized module, once
        that is loaded; None before, or when the kernel has no such copy."""
        module = self._optimized_module
        if module is None:
            return None
        key = (kernel_name, noalias)
        if key not in self._optimized:
            function = None
            if not noalias or noalias_variant(self._kernels[kernel_name]) is not None:
                self._device.current()
                function = self._lookup(module, kernel_symbol(kernel_name, noalias=noalias))
            self._optimized[key] = function
        return self._optimized[key]

    def _lookup(self, module: int, symbol: str) -> int:
        function = ctypes.c_void_p()
        self._device.driver.cuModuleGetFunction(ctypes.byref(function), module,
                                                symbol.encode())
        assert function.value is not None
        return function.value

    def _function(self, kernel_name: str) -> tuple[int, int]:
        """The kernel and its static shared memory in bytes."""
        known = self._functions.get(kernel_name)
        if known is not None:
            return known
        self._device.current()
        function = self._lookup(self._module, kernel_symbol(kernel_name))
        shared = ctypes.c_int()
        self._device.driver.cuFuncGetAttribute(ctypes.byref(shared), FUNC_SHARED_SIZE_BYTES,
                                               function)
        known = (function, shared.value)
        self._functions[kernel_name] = known
        return known

    def written(self, kernel_name: str) -> tuple[bool, ...]:
        """Per parameter, whether the kernel may write through it (asked only for buffers and
        images over host memory, which are copied back after a launch that may write them):
        an image unless it is read-only."""
        known = self._written.get(kernel_name)
        if known is None:
            function = self._kernels[kernel_name]
            # a deep expression (a sum of thousands of terms) recurses deeply in the analysis
            accesses = run_deep_if_needed(buffer_accesses, function)
            known = tuple(p.type.access != "read_only" if isinstance(p.type, ImageType)
                          else p.name in accesses and accesses[p.name].writes
                          for p in function.params)
            self._written[kernel_name] = known
        return known

    def images(self, kernel_name: str) -> tuple[bool, ...]:
        """Per parameter, whether it is an image."""
        return tuple(isinstance(p.type, ImageType) for p in self._kernels[kernel_name].params)

    def prepare(self, kernel_name: str, ndrange: NDRange) -> CUDALaunch:
        key = (kernel_name, ndrange)
        launch = self._launches.get(key)
        if launch is not None:
            return launch
        with self._lock:
            launch = self._launches.get(key)
            if launch is None:
                if kernel_name not in self._kernels:
                    raise DeviceBuildError(f"the program has no kernel '{kernel_name}'")
                function, shared = self._function(kernel_name)
                launch = CUDALaunch(self._device, self, function, kernel_name, ndrange, shared)
                self._launches[key] = launch
        return launch


class CUDADevice(Device):
    """GPU ``ordinal`` of the CUDA driver."""

    def __init__(self, ordinal: int = 0) -> None:
        driver = load_driver()
        if driver is None:
            raise RuntimeError("the CUDA device needs the NVIDIA driver (libcuda.so.1)")
        self.driver: Driver = driver
        handle = ctypes.c_int()
        driver.cuDeviceGet(ctypes.byref(handle), ordinal)
        self.handle = handle.value
        flags, active = ctypes.c_uint(), ctypes.c_int()
        driver.cuDevicePrimaryCtxGetState(self.handle, ctypes.byref(flags), ctypes.byref(active))
        if not active.value:  # the flags of a context another library started stay its own
            driver.cuDevicePrimaryCtxSetFlags_v2(self.handle, CTX_SCHED_SPIN)
        context = ctypes.c_void_p()
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), self.handle)
        self.context = context.value
        self._threads = threading.local()
        self.allocated = 0
        self.managed: dict[int, int] = {}  # address -> bytes of this device's allocations
        # the managed mirrors of buffers over programs' own host memory, while they live
        self._mirrors: weakref.WeakKeyDictionary[Any, Allocation] = weakref.WeakKeyDictionary()
        self._mirror_lock = threading.Lock()
        # per image: the GPU's copy of its descriptor and, over host memory, its mirror
        self._images: weakref.WeakKeyDictionary[Any, tuple[Allocation, Allocation | None]] = \
            weakref.WeakKeyDictionary()
        self.info = self._describe(ordinal)
        major = self.attribute("compute_capability_major")
        minor = self.attribute("compute_capability_minor")
        self.compute_capability = (major, minor)
        self.arch = f"sm_{major}{minor}"
        self.executor = CommandExecutor(4)

    # ------------------------------------------------------------------ driver state

    def attribute(self, name: str, default: int = 0) -> int:
        value = ctypes.c_int()
        try:
            self.driver.cuDeviceGetAttribute(ctypes.byref(value), ATTRIBUTES[name], self.handle)
        except CUDAError:
            return default
        return value.value

    def limit(self, limit: int, default: int = 0) -> int:
        """A limit of the device's context (``CUlimit``), ``default`` where the driver has
        none."""
        self.current()
        value = ctypes.c_size_t()
        try:
            self.driver.cuCtxGetLimit(ctypes.byref(value), limit)
        except CUDAError:
            return default
        return value.value

    def current(self) -> None:
        """Make the device's context current on the calling thread (once per thread)."""
        if getattr(self._threads, "current", False):
            return
        self.driver.cuCtxSetCurrent(self.context)
        self._threads.current = True

    def stream(self) -> int:
        """The calling thread's stream on this device."""
        stream: int | None = getattr(self._threads, "stream", None)
        if stream is None:
            self.current()
            handle = ctypes.c_void_p()
            self.driver.cuStreamCreate(ctypes.byref(handle), STREAM_NON_BLOCKING)
            stream = handle.value or 0
            self._threads.stream = stream
            self._threads.synchronize = self.driver.raw("cuStreamSynchronize")
        return stream

    def synchronizer(self) -> Callable[[ctypes.c_void_p], int]:
        """The calling thread's unchecked ``cuStreamSynchronize`` (its stream made)."""
        self.stream()
        synchronize: Callable[[ctypes.c_void_p], int] = self._threads.synchronize
        return synchronize

    def wait(self, stream: int, what: str) -> None:
        """Wait for the calling thread's ``stream``; a kernel fault raises KernelFault."""
        code = self._threads.synchronize(ctypes.c_void_p(stream))
        if code != CUDA_SUCCESS:
            self.wait_failed(code, what)

    def wait_failed(self, code: int, what: str) -> NoReturn:
        """Raise for a failed wait: KernelFault for a kernel's fault."""
        name = self.driver.error_name(code)
        if code in KERNEL_FAULTS:
            raise KernelFault(f"kernel '{what}' faulted on the GPU: {KERNEL_FAULTS[code]} "
                              f"({name}); the GPU's context cannot be used again in this "
                              "process")
        raise RuntimeError(f"{what} failed on the GPU: {name} ({code})")

    def _describe(self, ordinal: int) -> DeviceInfo:
        name = ctypes.create_string_buffer(256)
        self.driver.cuDeviceGetName(name, 256, self.handle)
        total = ctypes.c_size_t()
        self.driver.cuDeviceTotalMem_v2(ctypes.byref(total), self.handle)
        max_items = (self.attribute("max_block_dim_x", 1024),
                     self.attribute("max_block_dim_y", 1024),
                     self.attribute("max_block_dim_z", 64))
        return DeviceInfo(
            name=name.value.decode(errors="replace"), vendor="NVIDIA Corporation", kind="gpu",
            compute_units=self.attribute("multiprocessor_count", 1),
            clock_mhz=self.attribute("clock_rate_khz") // 1000,
            max_work_group_size=self.attribute("max_threads_per_block", 1024),
            max_work_item_sizes=max_items,
            local_mem_size=self.attribute("max_shared_memory_per_block", DEFAULT_SHARED_LIMIT),
            global_mem_size=total.value, max_mem_alloc_size=total.value // 4,
            global_mem_cache_size=self.attribute("l2_cache_size"), cache_line=128,
            vector_bytes=4, mem_base_addr_align=MEM_BASE_ADDR_ALIGN,
            host_unified_memory=False, extensions=EXTENSIONS, threads=1,
            printf_buffer_size=self.limit(LIMIT_PRINTF_FIFO_SIZE))

    # ------------------------------------------------------------------ programs

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> CUDAProgram:
        return CUDAProgram(self, module, options, debug)

    def context_created(self) -> None:
        """NVRTC's start-up is paid here, once per process: its first compile (the header
        alone, on a thread) costs 0.1-0.2 s more than a later one on the GPU machine, and the
        front end makes its one-time tables meanwhile, so that ``build()`` takes the
        program's own compile. NVIDIA's driver loads its compiler when a context is made too
        (1.8-2.3 s there, against ppcl's 0.5-0.65 s)."""
        options = BuildOptions()
        start_warm_up(quick_options(options) or nvrtc_options(options), self.arch)
        prepare_front_end()
        wait_for_warm_up()

    def default_local_size(self, global_size: Size3, work_dim: int) -> Size3:
        info = self.info
        return gpu_local_size(global_size, work_dim, info.max_work_group_size,
                              info.max_work_item_sizes)

    # ------------------------------------------------------------------ memory

    def allocate(self, nbytes: int) -> Allocation:
        self.current()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self.driver.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
        if nbytes > free.value or self.allocated + nbytes > total.value * 9 // 10:
            raise MemoryError(f"{nbytes} bytes more than the {self.allocated} allocated is more "
                              f"than the GPU has free ({free.value} of {total.value})")
        try:
            allocation = ManagedAllocation(self, nbytes)
        except CUDAError as error:
            raise MemoryError(str(error)) from error
        self.allocated += nbytes
        return allocation

    def bytes_in_use(self) -> int:
        return self.allocated

    def mirror(self, arg: BufferArg) -> tuple[np.ndarray, np.ndarray] | None:
        """For a buffer argument over a program's own host memory, its bytes and the same
        bytes of the buffer's managed mirror; None for memory of this device and NULL."""
        owner = arg.owner
        if not arg.address or owner is None:
            return None
        root = getattr(owner, "parent", None) or owner
        base = int(root.address)
        if base in self.managed:
            return None
        with self._mirror_lock:
            shadow = self._mirrors.get(root)
            if shadow is None:
                shadow = self.allocate(int(root.size))
                self._mirrors[root] = shadow
                weakref.finalize(root, shadow.release)
        start = arg.address - base
        host = owner.bytes_view()
        return host, shadow.array[start:start + host.nbytes]

    def _is_managed(self, address: int) -> bool:
        return any(base <= address < base + size for base, size in self.managed.items())

    def image_argument(self, arg: BufferArg) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]:
        """What a kernel gets for an image: the address of the GPU's copy of its descriptor
        (``arg.address`` is the runtime's, in host memory); and for an image over a program's
        host memory, its bytes and the same bytes of its managed mirror."""
        image = arg.owner
        host = image.bytes_view()
        with self._mirror_lock:
            known = self._images.get(image)
            if known is None:
                descriptor = self.allocate(IMAGE_DESCRIPTOR_BYTES)
                descriptor.array[:] = np.frombuffer(
                    ctypes.string_at(arg.address, IMAGE_DESCRIPTOR_BYTES), dtype=np.uint8)
                shadow = None
                if not self._is_managed(int(host.ctypes.data)):
                    shadow = self.allocate(max(1, host.nbytes))
                    # the descriptor's first field is the data pointer
                    descriptor.array[:8] = np.frombuffer(
                        np.uint64(shadow.address).tobytes(), dtype=np.uint8)
                known = (descriptor, shadow)
                self._images[image] = known
                weakref.finalize(image, _release, known)
        descriptor, shadow = known
        if shadow is None:
            return descriptor.address, None
        return descriptor.address, (host, shadow.array[:host.nbytes])

    def copy_async(self, target: np.ndarray, source: np.ndarray, stream: int) -> None:
        """Queue a copy of contiguous bytes on ``stream`` (the caller waits)."""
        self.driver.cuMemcpyAsync(int(target.ctypes.data), int(source.ctypes.data),
                                  target.nbytes, stream)

    @staticmethod
    def _contiguous_address(view: np.ndarray) -> int | None:
        if not view.flags.c_contiguous:
            return None
        return int(view.ctypes.data)

    def transfer(self, target: np.ndarray, source: np.ndarray) -> None:
        dst, src = self._contiguous_address(target), self._contiguous_address(source)
        if dst is None or src is None or target.nbytes != source.nbytes or not target.nbytes:
            target[...] = source
            return
        stream = self.stream()
        self.driver.cuMemcpyAsync(dst, src, target.nbytes, stream)
        self.wait(stream, "a copy")

    def fill(self, target: np.ndarray, pattern: np.ndarray) -> None:
        address = self._contiguous_address(target)
        width = pattern.nbytes
        if address is None or width not in (1, 4) or address % width or not target.nbytes:
            target[...] = pattern
            return
        stream = self.stream()
        if width == 1:
            self.driver.cuMemsetD8Async(address, int(pattern.reshape(-1)[0]), target.nbytes,
                                        stream)
        else:
            value = int(np.frombuffer(pattern.tobytes(), dtype=np.uint32)[0])
            self.driver.cuMemsetD32Async(address, value, target.nbytes // 4, stream)
        self.wait(stream, "a fill")

    # ------------------------------------------------------------------ commands

    def submit(self, task: Callable[[], None]) -> None:
        self.executor.submit(task)
