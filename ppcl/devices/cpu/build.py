"""The CPU device's compile driver: one kernel, one launch shape -> a loaded C function.

``build_kernel`` runs the compiler's pipeline (``ppcl.compiler.pipeline.lower_kernel``: the
work-group function printed as C), then the system C compiler through the on-disk cache, and
loads the shared object. The entry point it returns runs a range of work-groups::

    void ppcl_run_<kernel>(void **args, const ppcl_launch *launch,
                           size_t first_group, size_t last_group, char *local_mem);
"""

from __future__ import annotations

import ctypes
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ppcl.compiler import toolchain
from ppcl.compiler.codegen.c_unit import ArgKind
from ppcl.compiler.deepstack import run_deep_if_needed
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.pipeline import GeneratedKernel, KernelSpec, Pipeline, lower_kernel
from ppcl.devices.interface import DeviceBuildError, NDRange
from ppcl.devices.printf_buffer import PrintfBuffer
from ppcl.settings import NO_DEBUG, Debug

INT_MAX = 2**31 - 1


class LaunchDescriptor(ctypes.Structure):
    """Mirror of ``ppcl_launch`` in the generated C."""

    _fields_ = [
        ("work_dim", ctypes.c_size_t),
        ("global_size", ctypes.c_size_t * 3),
        ("global_offset", ctypes.c_size_t * 3),
        ("local_size", ctypes.c_size_t * 3),
        ("num_groups", ctypes.c_size_t * 3),
        ("unsplit", ctypes.c_size_t),  # bit k: split loop k runs as formed (dispatch.py)
    ]


RUN_ARGTYPES = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(LaunchDescriptor),
                ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]


@dataclass
class CompiledKernel:
    name: str
    spec: KernelSpec
    generated: GeneratedKernel
    library: ctypes.CDLL
    entry: Any  # the ctypes function ppcl_run_<name>
    cached: bool
    timings: dict[str, float] = field(default_factory=dict)
    vector_report: str = ""
    printf: PrintfBuffer | None = None  # the library's printf buffer, for kernels that print

    @property
    def local_size(self) -> tuple[int, int, int]:
        return self.spec.local_size

    @property
    def arg_kinds(self) -> tuple[ArgKind, ...]:
        return self.generated.arg_kinds

    @property
    def local_mem_static_bytes(self) -> int:
        return self.generated.local_mem_static_bytes

    @property
    def block_static_bytes(self) -> int:
        return self.generated.block_static_bytes

    @property
    def c_source(self) -> str:
        return self.generated.source


def ids_fit_in_int(ndrange: NDRange) -> bool:
    """Whether every global id of a launch fits in ``int`` (what ``narrow_ids`` builds need)."""
    return all(g + o <= INT_MAX for g, o in zip(ndrange.global_size, ndrange.global_offset))


def spec_for(ndrange: NDRange) -> KernelSpec:
    """The specialization a launch shape is built with."""
    return KernelSpec(ndrange.local_size, ndrange.global_offset == (0, 0, 0),
                      ids_fit_in_int(ndrange))


def launch_descriptor(ndrange: NDRange, unsplit: int = 0) -> LaunchDescriptor:
    """The descriptor of a launch; ``unsplit``: the split loops it runs as formed."""
    desc = LaunchDescriptor()
    desc.work_dim = ndrange.work_dim
    desc.unsplit = unsplit
    groups = ndrange.num_groups
    for d in range(3):
        desc.global_size[d] = ndrange.global_size[d]
        desc.global_offset[d] = ndrange.global_offset[d]
        desc.local_size[d] = ndrange.local_size[d]
        desc.num_groups[d] = groups[d]
    return desc


def _log(debug: Debug, topic: str, title: str, seconds: float, text: str | None = None) -> None:
    if debug.shows("time"):
        print(f"[ppcl] {title}: {seconds * 1000:.2f} ms", file=sys.stderr)
    if text is not None and debug.shows(topic):
        print(text, file=sys.stderr)


def _cc_report(kernel_name: str, compiled: toolchain.CompiledObject) -> str:
    """What ``PPCL_DEBUG=cc`` shows of a kernel's C compile: the command and the compiler's
    vectorizer report (stored with a cached object, so a cache hit shows it too)."""
    how = "cached" if compiled.cached else f"built in {compiled.compile_seconds * 1000:.0f} ms"
    source = compiled.path.with_suffix(".c")
    lines = [f"// ppcl cc {kernel_name} ({how}): {compiled.command} {source}"]
    report = (compiled.report or "").strip()
    lines.append(report if report else "// (the C compiler reported nothing)")
    return "\n".join(lines)


def lower_for_check(module: ir.Module, kernel_name: str, spec: KernelSpec,
                    options: BuildOptions, pipeline: Pipeline | None) -> str:
    """The C of a kernel, for the C compiler's check at ``build()``."""
    from ppcl.compiler.diagnostics import CompileError

    try:
        return run_deep_if_needed(lower_kernel, module, kernel_name, spec, options, NO_DEBUG,
                                  pipeline).source
    except CompileError as error:
        raise DeviceBuildError("the kernel compiler rejected it", error.log,
                               error.diagnostics) from error


def build_kernel(module: ir.Module, kernel_name: str, spec: KernelSpec, options: BuildOptions,
                 debug: Debug = NO_DEBUG, *, key_parts: tuple[str, ...] = (),
                 want_vector_report: bool = False,
                 pipeline: Pipeline | None = None) -> CompiledKernel:
    """Compile ``kernel_name`` of ``module`` for ``spec`` through ``pipeline`` (default: the
    CPU device's); raises :class:`DeviceBuildError` when the compiler or the C compiler
    rejects it."""
    from ppcl.compiler.diagnostics import CompileError

    timings: dict[str, float] = {}
    start = time.perf_counter()
    try:
        # deep expressions (a sum of thousands of terms) recurse deeply in the passes
        generated = run_deep_if_needed(lower_kernel, module, kernel_name, spec, options, debug,
                                       pipeline)
    except CompileError as error:
        raise DeviceBuildError("the kernel compiler rejected it", error.log,
                               error.diagnostics) from error
    timings["lower"] = time.perf_counter() - start

    start = time.perf_counter()
    try:
        compiled = toolchain.compile_shared(
            generated.source, math_flags=toolchain.c_math_flags(options),
            want_vector_report=want_vector_report or debug.shows("cc"),
            specialization=f"local={spec.local_size};zero_offset={spec.zero_offset};"
                           f"narrow_ids={spec.narrow_ids}",
            key_parts=(*key_parts, kernel_name),
        )
        library = toolchain.load(compiled.path)
    except toolchain.ToolchainError as error:
        raise DeviceBuildError(str(error), error.stderr) from error
    timings["cc"] = time.perf_counter() - start
    _log(debug, "cc", "cc" + (" (cached)" if compiled.cached else ""), timings["cc"],
         _cc_report(kernel_name, compiled))
    entry = getattr(library, generated.entry)
    entry.argtypes = RUN_ARGTYPES
    entry.restype = None
    printf = PrintfBuffer(library, generated.printf_formats, kernel_name) \
        if generated.uses_printf else None
    return CompiledKernel(kernel_name, spec, generated, library, entry, compiled.cached,
                          timings, compiled.report or "", printf)
