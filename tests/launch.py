"""Launching a kernel from a test through the runtime, the path users run.

``run(source, "name", global_size, local_size, *args)`` builds the program (once per source and
options), copies numpy array arguments into Buffers, launches on a queue of the serial
device and copies every Buffer back into its array, so a test reads its results from the arrays
it passed, as it would from a serial launcher. Arguments follow the kernel's parameters:

- a ``__global`` or ``__constant`` pointer takes a numpy array (or None);
- a ``__local`` pointer takes ``LocalMem(nbytes)`` (or a ``cl.LocalMemory``);
- a parameter passed by value takes a numpy scalar, or a numpy array holding its bytes (a
  vector such as ``float4``, a struct as a structured array of one element).

The serial device runs the work-groups in order in the launching thread, so results that
depend on the order of work-groups (atomics, printf) are the same on every run.
"""

from __future__ import annotations

import ctypes
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import ppcl
import ppcl as cl
import ppcl.runtime.platform
from ppcl.compiler.frontend import compile_source, parse_build_options
from ppcl.compiler.ir.layout import LOCAL_ALIGN, align_up, pad3
from ppcl.compiler.pipeline import KernelSpec, cpu_pipeline, kernel_ir
from ppcl.devices.cpu import CPUProgram
from ppcl.devices.cpu.args import ArgBlock
from ppcl.devices.cpu.build import CompiledKernel, launch_descriptor
from ppcl.devices.cpu.build import build_kernel as _build_kernel
from ppcl.devices.host_memory import aligned_bytes
from ppcl.devices.interface import BufferArg, LocalArg, NDRange, ValueArg
from ppcl.devices.serial import SerialDevice
from ppcl.settings import Debug


@dataclass(frozen=True)
class LocalMem:
    """A ``__local`` pointer argument of ``nbytes`` bytes."""

    nbytes: int


class _MaskedSerialDevice(SerialDevice):
    """The serial device building through a pipeline without the uniformity analysis, so
    every statement runs under masks: the reference the lock-step formation is compared with.
    It is made through the device interface, as any device is."""

    def build(self, module: Any, options: Any, debug: Any) -> CPUProgram:
        return CPUProgram(module, options, debug, self.pool,
                          pipeline=cpu_pipeline(uniformity=False))


@functools.cache
def serial_context(uniformity: bool = True) -> cl.Context:
    """A context on the serial device (every group in the launching thread, in order), shared
    by every launch of the test session; ``uniformity=False`` builds every statement masked."""
    backend = SerialDevice() if uniformity else _MaskedSerialDevice()
    return cl.Context([ppcl.runtime.platform.Device(ppcl.get_platforms()[0], backend)])


@functools.cache
def _queue(uniformity: bool = True) -> cl.CommandQueue:
    return cl.CommandQueue(serial_context(uniformity))


def program(source: str, options: str = "", uniformity: bool = True) -> cl.Program:
    """``source`` built with ``options`` in the serial context, once per session (the suite
    launches the same sources many times)."""
    return _built(source, options, uniformity)


@functools.cache
def _built(source: str, options: str, uniformity: bool) -> cl.Program:
    return cl.Program(serial_context(uniformity), source).build(options)


def _argument(kernel: cl.Kernel, index: int, value: Any,
              copies: list[tuple[np.ndarray, cl.Buffer]]) -> Any:
    context = kernel.context
    if index >= kernel.num_args:
        return value  # the launch reports the count with the runtime's error
    space = kernel.get_arg_info(index, cl.kernel_arg_info.ADDRESS_QUALIFIER)
    if space == cl.kernel_arg_address_qualifier.LOCAL:
        return cl.LocalMemory(value.nbytes) if isinstance(value, LocalMem) else value
    if space == cl.kernel_arg_address_qualifier.PRIVATE or value is None:
        return value
    if not isinstance(value, np.ndarray):
        raise TypeError(f"argument {index} of kernel '{kernel.function_name}' is a pointer: "
                        f"pass a numpy array, not {type(value).__name__}")
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    buffer = cl.Buffer(context, flags, hostbuf=value)
    copies.append((value, buffer))
    return buffer


def run(source: str, kernel_name: str, global_size: Sequence[int],
        local_size: Sequence[int] | None, *args: Any, options: str = "",
        offset: Sequence[int] | None = None, uniformity: bool = True) -> None:
    """Launch ``kernel_name`` of ``source`` over the NDRange on the serial device and wait for
    it; numpy arrays passed for pointer parameters receive what the kernel left in memory.

    ``uniformity=False`` builds the kernel without the uniformity analysis (every statement
    masked), for tests that compare both formations. Launch errors are the runtime's
    (``cl.LogicError`` with an OpenCL code, e.g. ``CL_INVALID_WORK_GROUP_SIZE``).
    """
    queue = _queue(uniformity)
    kernel = cl.Kernel(program(source, options, uniformity), kernel_name)
    copies: list[tuple[np.ndarray, cl.Buffer]] = []
    values = [_argument(kernel, i, value, copies) for i, value in enumerate(args)]
    kernel(queue, global_size, local_size, *values, global_offset=offset)
    for array, buffer in copies:
        cl.enqueue_copy(queue, array, buffer)
    queue.finish()


def build_kernel(source: str, kernel_name: str, options: str = "",
                 local_size: Sequence[int] = (1,), *, use_uniformity: bool = True,
                 want_vector_report: bool = False, zero_offset: bool = False,
                 narrow_ids: bool = True) -> CompiledKernel:
    """The CPU device's build of one kernel for one launch shape, for tests that read the
    generated C (``.c_source``) or the compiler's vectorization report: the front end, then the
    same compile driver a launch runs (``ppcl.devices.cpu.build``)."""
    module = _frontend_module(source, options)
    spec = KernelSpec(pad3(local_size), zero_offset, narrow_ids)
    return _build_kernel(module, kernel_name, spec, parse_build_options(options),
                         key_parts=(options,), want_vector_report=want_vector_report,
                         pipeline=cpu_pipeline(uniformity=use_uniformity))


@functools.cache
def _frontend_module(source: str, options: str) -> Any:
    return compile_source(source, options=options).module


def run_in_chunks(kernel: CompiledKernel, global_size: Sequence[int], args: Sequence[Any],
                  chunk: int, offset: Sequence[int] | None = None, unsplit: int = 0) -> None:
    """Run the groups of a built kernel in chunks of ``chunk`` consecutive groups, as the
    threads of the CPU device claim them; numpy arrays are passed by address (they must be
    aligned as buffers are, see ``aligned_empty``) and updated in place. ``unsplit``: the
    split loops that run as formed (the dispatcher's mask)."""
    ndrange = NDRange(len(global_size), pad3(global_size), kernel.local_size,
                      pad3(offset or (), 0))
    values = [BufferArg(a.ctypes.data, a) if isinstance(a, np.ndarray)
              else LocalArg(a.nbytes) if isinstance(a, LocalMem)
              else ValueArg(np.asarray(a).tobytes()) for a in args]
    packed = ArgBlock(values, kernel.local_mem_static_bytes)
    block = ctypes.create_string_buffer(packed.local_bytes + 2 * LOCAL_ALIGN)
    base = align_up(ctypes.addressof(block))
    descriptor = launch_descriptor(ndrange, unsplit)
    groups = ndrange.group_count
    for first in range(0, groups, chunk):
        kernel.entry(packed.argv, ctypes.byref(descriptor), first, min(first + chunk, groups),
                     base)


def aligned_empty(shape: Any, dtype: Any) -> np.ndarray:
    """An uninitialised array aligned as the device's buffers are (the generated code may use
    aligned vector loads): host memory from the device's own ``aligned_bytes``."""
    dtype = np.dtype(dtype)
    return aligned_bytes(int(np.prod(shape)) * dtype.itemsize).view(dtype).reshape(shape)


def plan_text(source: str, name: str, local_size: tuple[int, int, int] = (16, 1, 1),
              options: str = "") -> str:
    """What ``PPCL_DEBUG=plans`` prints for kernel ``name`` of ``source`` built for
    ``local_size`` with the build ``options`` (the CPU pipeline, nothing compiled)."""
    stream = io.StringIO()
    kernel_ir(compile_source(source).module, name, KernelSpec(local_size),
              parse_build_options(options), Debug(frozenset({"plans"})), stream=stream)
    return stream.getvalue()
