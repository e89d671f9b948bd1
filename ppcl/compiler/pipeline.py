"""The kernel build pipeline of the CPU device (interim: the passes land in one pipeline)."""

from __future__ import annotations

from dataclasses import dataclass

from ppcl.compiler.analysis.uniformity import analyze_kernel
from ppcl.compiler.codegen.kernel_c import GeneratedKernel, generate_formed_c
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.transforms.workgroup import form_workgroup
from ppcl.settings import NO_DEBUG, Debug


@dataclass(frozen=True)
class KernelSpec:
    """The launch facts a kernel build is specialized for."""

    local_size: tuple[int, int, int]
    zero_offset: bool = False
    narrow_ids: bool = True


@dataclass(frozen=True)
class Pipeline:
    uniformity: bool = True


def cpu_pipeline(uniformity: bool = True) -> Pipeline:
    return Pipeline(uniformity)


def lower_kernel(module: ir.Module, kernel_name: str, spec: KernelSpec, options: BuildOptions,
                 debug: Debug = NO_DEBUG, pipeline: Pipeline | None = None) -> GeneratedKernel:
    kernel = module.function(kernel_name)
    if kernel is None or not kernel.is_kernel:
        raise KeyError(f"no kernel named {kernel_name!r}")
    fast_math = options.fast_relaxed_math or options.unsafe_math_optimizations
    uniformity = pipeline is None or pipeline.uniformity
    formed = form_workgroup(module, kernel, spec.local_size,
                            analyze_kernel(module, kernel) if uniformity else None)
    return generate_formed_c(module, formed, zero_offset=spec.zero_offset, fast_math=fast_math,
                             narrow_ids=spec.narrow_ids)
