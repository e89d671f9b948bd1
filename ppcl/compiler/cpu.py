"""CPU kernel compiler driver and a serial launcher.

``build_kernel`` runs the front end, the kernel build (``compiler/pipeline.py``: passes, then
C) and the system C compiler (through the on-disk cache) for one kernel and one local size.
``run_kernel`` executes every work-group of an NDRange in this thread, through ctypes (which
releases the GIL during the call).

``debug`` (by default the ``PPCL_DEBUG`` settings, read once per build by ``ppcl.settings``)
says what to print to stderr.
"""

from __future__ import annotations

import ctypes
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.compiler import toolchain
from ppcl.compiler.codegen.c_unit import ArgKind
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.pipeline import GeneratedKernel, KernelSpec, cpu_pipeline, lower_kernel
from ppcl.compiler.transforms.workgroup import LOCAL_ALIGN
from ppcl.settings import Debug, read_settings

LocalSize = tuple[int, int, int]


class LaunchDescriptor(ctypes.Structure):
    """Mirror of ``ppcl_launch`` in the generated C."""

    _fields_ = [
        ("work_dim", ctypes.c_size_t),
        ("global_size", ctypes.c_size_t * 3),
        ("global_offset", ctypes.c_size_t * 3),
        ("local_size", ctypes.c_size_t * 3),
        ("num_groups", ctypes.c_size_t * 3),
    ]


RUN_ARGTYPES = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(LaunchDescriptor),
                ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]


@dataclass(frozen=True)
class LocalMem:
    """A ``__local`` pointer argument of ``nbytes`` bytes."""

    nbytes: int


@dataclass
class CompiledKernel:
    name: str
    local_size: LocalSize
    generated: GeneratedKernel
    library: ctypes.CDLL
    entry: Any  # the ctypes function ppcl_run_<name>
    cached: bool
    timings: dict[str, float] = field(default_factory=dict)
    narrow_ids: bool = True  # global ids computed in 32 bits: launches must fit in INT_MAX

    @property
    def arg_kinds(self) -> tuple[ArgKind, ...]:
        return self.generated.arg_kinds

    @property
    def local_mem_static_bytes(self) -> int:
        return self.generated.local_mem_static_bytes

    @property
    def c_source(self) -> str:
        return self.generated.source


def _log(title: str, seconds: float, text: str | None = None) -> None:
    print(f"[ppcl] {title}: {seconds * 1000:.2f} ms", file=sys.stderr)
    if text is not None:
        print(text, file=sys.stderr)


def _pad3(values: Sequence[int] | int) -> LocalSize:
    if isinstance(values, int):
        values = (values,)
    padded = list(values) + [1] * (3 - len(values))
    return (int(padded[0]), int(padded[1]), int(padded[2]))


def build_kernel(source_or_module: str | ir.Module, kernel_name: str, options: str = "",
                 local_size: Sequence[int] | int = (1, 1, 1), *, zero_offset: bool = False,
                 use_uniformity: bool = True, want_vector_report: bool = False,
                 narrow_ids: bool = True, debug: Debug | None = None) -> CompiledKernel:
    """Compile ``kernel_name`` for ``local_size``; ``zero_offset`` specializes the global
    offset to zero (launches with an offset then need another build)."""
    if debug is None:
        debug = read_settings().debug
    timings: dict[str, float] = {}
    ls = _pad3(local_size)
    source_key = ""
    if isinstance(source_or_module, str):
        from ppcl.compiler.frontend import compile_source

        start = time.perf_counter()
        result = compile_source(source_or_module, options=options)
        timings["frontend"] = time.perf_counter() - start
        module = result.module
        source_key = source_or_module
        if debug.shows("passes"):
            _log("frontend", timings["frontend"], print_opencl(module))
    else:
        module = source_or_module
    parsed = parse_build_options(options)
    fast_math = parsed.fast_relaxed_math or parsed.unsafe_math_optimizations

    start = time.perf_counter()
    generated = lower_kernel(module, kernel_name, KernelSpec(ls, zero_offset, narrow_ids),
                             parsed, debug, cpu_pipeline(use_uniformity))
    timings["lower"] = time.perf_counter() - start

    start = time.perf_counter()
    compiled = toolchain.compile_shared(
        generated.source, fast_math=fast_math, want_vector_report=want_vector_report,
        specialization=f"local={ls};zero_offset={zero_offset};narrow_ids={narrow_ids}",
        key_parts=(source_key, options, kernel_name),
    )
    library = toolchain.load(compiled.path)
    timings["cc"] = time.perf_counter() - start
    if debug.shows("cc"):
        _log("cc" + (" (cached)" if compiled.cached else ""), timings["cc"], compiled.report)
    entry = getattr(library, generated.entry)
    entry.argtypes = RUN_ARGTYPES
    entry.restype = None
    kernel_obj = CompiledKernel(kernel_name, ls, generated, library, entry, compiled.cached,
                                timings, narrow_ids)
    kernel_obj.timings["vector_report"] = 0.0
    if want_vector_report:
        kernel_obj.vector_report = compiled.report or ""  # type: ignore[attr-defined]
    return kernel_obj


def local_layout(kernel: CompiledKernel, args: Sequence[Any]) -> tuple[list[int], int]:
    """Offsets of the ``__local`` pointer arguments in the local block and the block size."""
    offset = kernel.local_mem_static_bytes
    offsets: list[int] = []
    for kind, value in zip(kernel.arg_kinds, args):
        if kind.kind != "local":
            offsets.append(0)
            continue
        if not isinstance(value, LocalMem):
            raise TypeError(f"argument {kind.name!r} is a __local pointer: pass LocalMem(nbytes)")
        offset = (offset + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
        offsets.append(offset)
        offset += value.nbytes
    return offsets, max(offset, 1)


def pack_args(kernel: CompiledKernel, args: Sequence[Any]) -> tuple[Any, list[Any], int]:
    """The ``void **`` argument array (and the objects it keeps alive) and the local size."""
    kinds = kernel.arg_kinds
    if len(args) != len(kinds):
        raise TypeError(f"kernel {kernel.name!r} takes {len(kinds)} arguments, got {len(args)}")
    offsets, local_bytes = local_layout(kernel, args)
    keep: list[Any] = []
    array = (ctypes.c_void_p * len(kinds))()
    for i, (kind, value) in enumerate(zip(kinds, args)):
        holder: Any
        if kind.kind == "buffer":
            if value is None:
                holder = ctypes.c_void_p(0)
            else:
                if not isinstance(value, np.ndarray) or not value.flags.c_contiguous:
                    raise TypeError(f"argument {kind.name!r}: pass a C-contiguous numpy array")
                holder = ctypes.c_void_p(value.ctypes.data)
                keep.append(value)
        elif kind.kind == "local":
            holder = ctypes.c_size_t(offsets[i])
        else:
            data = np.asarray(value).tobytes() if not isinstance(value, bytes | bytearray) else bytes(value)
            if len(data) < kind.size:
                data = data + bytes(kind.size - len(data))
            holder = ctypes.create_string_buffer(data, max(len(data), kind.size))
        keep.append(holder)
        array[i] = ctypes.cast(ctypes.pointer(holder), ctypes.c_void_p)
    return array, keep, local_bytes


BUFFER_ALIGN = 128  # bytes: the alignment of the widest OpenCL type (double16)


def aligned_empty(shape: Any, dtype: Any) -> np.ndarray:
    """An uninitialised array whose data starts on a ``BUFFER_ALIGN`` boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + BUFFER_ALIGN, np.uint8)
    start = (-raw.ctypes.data) % BUFFER_ALIGN
    return raw[start:start + nbytes].view(dtype).reshape(shape)


INT_MAX = 2**31 - 1


def ids_fit_in_int(global_size: Sequence[int], global_offset: Sequence[int] | None) -> bool:
    """Whether every global id of a launch fits in ``int`` (what ``narrow_ids`` builds need)."""
    offsets = list(global_offset or ()) + [0] * (len(global_size) - len(global_offset or ()))
    return all(g + o <= INT_MAX for g, o in zip(global_size, offsets))


def launch_descriptor(global_size: Sequence[int], local_size: LocalSize,
                      global_offset: Sequence[int] | None) -> LaunchDescriptor:
    dims = len(global_size)
    gs = _pad3(global_size)
    off = _pad3(global_offset) if global_offset is not None else (0, 0, 0)
    if global_offset is not None and len(global_offset) < 3:
        off = (off[0], off[1] if len(global_offset) > 1 else 0, off[2] if len(global_offset) > 2 else 0)
    desc = LaunchDescriptor()
    desc.work_dim = dims
    for d in range(3):
        if gs[d] % local_size[d]:
            raise ValueError(f"CL_INVALID_WORK_GROUP_SIZE: global size {gs[d]} in dimension {d} "
                             f"is not a multiple of the local size {local_size[d]}")
        desc.global_size[d] = gs[d]
        desc.global_offset[d] = off[d]
        desc.local_size[d] = local_size[d]
        desc.num_groups[d] = gs[d] // local_size[d]
    return desc


def run_kernel(kernel: CompiledKernel, global_size: Sequence[int] | int,
               local_size: Sequence[int] | int | None, args: Sequence[Any],
               global_offset: Sequence[int] | None = None) -> None:
    """Run every work-group serially; numpy array arguments are modified in place."""
    gsize = (global_size,) if isinstance(global_size, int) else tuple(global_size)
    ls = kernel.local_size if local_size is None else _pad3(local_size)
    if ls != kernel.local_size:
        raise ValueError(f"kernel was built for local size {kernel.local_size}, launched with {ls}")
    if kernel.narrow_ids and not ids_fit_in_int(gsize, global_offset):
        raise ValueError(f"kernel {kernel.name!r} was built with 32-bit global ids "
                         "(narrow_ids=True); build it with narrow_ids=False for this range")
    desc = launch_descriptor(gsize, ls, global_offset)
    # OpenCL buffers are aligned for their widest vector type and the generated code relies on
    # it (aligned vector loads); numpy arrays may not be, so such arrays run through a copy.
    args = list(args)
    copied: list[tuple[np.ndarray, np.ndarray]] = []
    for i, value in enumerate(args):
        if isinstance(value, np.ndarray) and value.ctypes.data % BUFFER_ALIGN:
            aligned_array = aligned_empty(value.shape, value.dtype)
            aligned_array[...] = value
            copied.append((value, aligned_array))
            args[i] = aligned_array
    array, keep, local_bytes = pack_args(kernel, args)
    local_block = ctypes.create_string_buffer(local_bytes + LOCAL_ALIGN)
    base = ctypes.addressof(local_block)
    aligned = (base + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
    groups = desc.num_groups[0] * desc.num_groups[1] * desc.num_groups[2]
    kernel.entry(array, ctypes.byref(desc), 0, groups, aligned)
    for original, aligned_array in copied:
        original[...] = aligned_array
    del keep
