"""The passes of a kernel build, declared once, and ``lower_kernel``, the entry of the CPU device.

A kernel build runs passes (``compiler/passes.py``) over a frozen ``KernelIR``: the module,
the kernel function, and once formed the work-group function (``FormedKernel``), plus the
specialization it is built for (``KernelSpec``). The CPU device's sequence is
``CPU_PIPELINE``::

    inline,switch,normalize,magicdiv,components,workgroup,scalarize,schedule,split,skip,sink

``inline`` inlines helpers that reach a barrier, ``switch`` rewrites a switch holding a
barrier into the ``if``s and loops formation splits, ``normalize`` makes equivalent shapes of a
kernel one (guards, counted loops, pointer walks) so that the plans see one, ``magicdiv``
turns divisions by launch constants into multiplies by magic numbers, ``components``
loads vector elements used a component at a time as scalar components, ``workgroup`` forms the work-group function
with the uniformity analysis, ``scalarize`` splits vector temporaries of hot work-item loops
into scalars, ``schedule`` records every decision the printer follows, ``split`` gives work-item
loops decided on a subdomain a fast copy for it, ``skip`` lets a work-item loop whose guard reads
a flag at unit stride skip blocks of lanes whose flags are all zero, ``sink`` runs a literal
stored to one address under the lanes' conditions once after its loop. The printer
(``codegen/c_unit.py``) then prints the C. ``Debug`` says what to show: ``passes`` (the IR after
each pass), ``time``, ``plans`` (the scheduling decisions), ``c`` (the generated C), and
``verify`` runs the IR verifier after every pass.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from typing import TextIO

from ppcl.compiler.analysis.uniformity import analyze_kernel
from ppcl.compiler.analysis.verify import check
from ppcl.compiler.codegen.c_unit import ArgKind, print_c_unit
from ppcl.compiler.codegen.formed_ir import print_formed
from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.printf_spec import PrintfFormat
from ppcl.compiler.ir.types import AddressSpace
from ppcl.compiler.ir.visit import Rewriter
from ppcl.compiler.passes import Pass, Pipeline, PipelineError, register
from ppcl.compiler.transforms.components import component_loads
from ppcl.compiler.transforms.context import vector_context_layouts
from ppcl.compiler.transforms.inline import inline_barrier_functions
from ppcl.compiler.transforms.live_ranges import split_live_ranges
from ppcl.compiler.transforms.magicdiv import magic_divisions
from ppcl.compiler.transforms.normalize import normalize
from ppcl.compiler.transforms.scalarize import scalarize_hot_regions
from ppcl.compiler.transforms.schedule import schedule
from ppcl.compiler.transforms.selects import branch_free
from ppcl.compiler.transforms.sink import sink_kernel
from ppcl.compiler.transforms.skip import skip_kernel
from ppcl.compiler.transforms.split import split_kernel
from ppcl.compiler.transforms.switch import lower_switches
from ppcl.compiler.transforms.unroll import unroll_loops
from ppcl.compiler.transforms.workgroup import FormedKernel, form_workgroup
from ppcl.settings import NO_DEBUG, Debug

__all__ = [
    "CPU_PIPELINE", "GeneratedKernel", "KernelIR", "KernelSpec", "cpu_pipeline", "kernel_ir",
    "lower_kernel",
]


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel build is specialized for: the local size baked into the group function,
    a global offset known to be zero, and global ids that fit in ``int`` (``narrow_ids``: a
    launch of a larger range needs a build without it)."""

    local_size: tuple[int, int, int]
    zero_offset: bool = False
    narrow_ids: bool = True


@dataclass(frozen=True)
class KernelIR:
    """The value the passes of a kernel build go through. ``kernel`` is the kernel function as
    the passes have made it (``module`` keeps the program as written, for helpers and types);
    ``formed`` is set from the ``workgroup`` pass on."""

    module: ir.Module
    kernel: ir.Function
    spec: KernelSpec
    fast_math: bool = False
    formed: FormedKernel | None = None
    split: bool = True  # input space splitting allowed (the build option -ppcl-no-split: no)
    unroll: bool = True  # short loops unrolled (the build option -ppcl-no-unroll: no)
    selects: bool = True  # choices made branch-free (the build option -ppcl-no-selects: no)
    # loops whose trip count varies per work-item run by the group under a mask (the build
    # option -ppcl-no-masked-loops: no)
    masked_loops: bool = True
    # vector code of work-item loops split into scalars (the build option -ppcl-no-scalarize:
    # no)
    scalarize: bool = True
    notes: tuple[str, ...] = ()  # decisions of the passes that keep no plan of their own
    # variables declared at the start of the kernel that formation runs once per group
    group_setup: frozenset[str] = frozenset()
    unrolled: tuple[Loc, ...] = ()  # where the loops the unroll pass wrote out were

    def needs_unformed(self, pass_name: str) -> None:
        """Raise unless work-group formation is still to come (a pass over the kernel as
        written)."""
        if self.formed is not None:
            raise PipelineError(f"pass '{pass_name}' runs before 'workgroup'")

    def switched_off(self, pass_name: str, option: str) -> KernelIR:
        """This value, with the note that pass ``pass_name`` was turned off by ``option``."""
        return dataclasses.replace(self, notes=self.notes + (
            f"{pass_name}: off (build option {option})",))

    def needs_formed(self, pass_name: str) -> FormedKernel:
        if self.formed is None:
            raise PipelineError(f"pass '{pass_name}' needs a formed kernel: run 'workgroup' "
                                "before it")
        return self.formed

    def with_kernel(self) -> ir.Module:
        """The module with this kernel function in place of the one written (for verifying)."""
        decls = tuple(self.kernel if isinstance(d, ir.Function) and d.body is not None
                      and d.name == self.kernel.name else d for d in self.module.decls)
        return dataclasses.replace(self.module, decls=decls)

    def check(self, context: str) -> None:
        """The IR invariants (``analysis/verify.py``). A formed kernel is checked as a function
        whose body declares its ``__local`` variables and group scalars first. Names are
        unique per region there, not per function: formation declares recomputed values again
        in each region that reads them and copies the code of interchanged loops."""
        if self.formed is None:
            check(self.with_kernel(), context)
            return
        formed = self.formed
        decls = [ir.VarDecl(v.name, v.type, AddressSpace.LOCAL) for v in formed.local_vars]
        decls += [ir.VarDecl(name, t) for name, t in formed.group_scalars.items()]
        group = tuple(ir.DeclStmt((d,)) for d in decls)
        body = dataclasses.replace(formed.body, stmts=group + formed.body.stmts)
        function = dataclasses.replace(formed.function, body=body)
        module = dataclasses.replace(self, kernel=function).with_kernel()
        check(module, context, unique_names=False)

    def dump(self) -> str:
        if self.formed is None:
            return print_ir(self.kernel)
        return print_formed(self.formed)

    def rewritten(self, rewriter: Rewriter) -> KernelIR:
        if self.formed is not None:
            raise PipelineError("rewriting a formed kernel: run the pass before 'workgroup'")
        return dataclasses.replace(self, kernel=rewriter.rewrite(self.kernel))


# ---------------------------------------------------------------- the passes of a kernel build


@dataclass(frozen=True)
class InlineOptions:
    small: bool = True  # small helpers too, so that the plans see their loops and indices


@register
class InlinePass(Pass):
    """Inline every call of a helper that reaches a barrier (``transforms/inline.py``), so that
    work-group formation sees every barrier of the kernel, and the calls of small helpers, so
    that the plans see through them (a loop calling a function is not interchanged)."""

    name = "inline"
    Options = InlineOptions

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("inline")
        kernel = inline_barrier_functions(value.module, value.kernel, small=self.options.small)
        return dataclasses.replace(value, kernel=kernel)


@register
class SwitchPass(Pass):
    """A switch holding a barrier (or an exit formation lifts) rewritten into ``if``s in a
    one-trip loop (``transforms/switch.py``), which work-group formation splits at barriers."""

    name = "switch"

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("switch")
        return dataclasses.replace(value, kernel=lower_switches(value.kernel))


@dataclass(frozen=True)
class NormalizeOptions:
    guards: bool = True  # a guard around the rest of the kernel as an early return
    loops: bool = True  # counted while and do loops as for loops, counters declared in them
    pointers: bool = True  # pointer walks in counted loops as index arithmetic
    divisions: bool = True  # unsigned divisions by powers of two in variables as shifts
    ranges: bool = True  # a variable reassigned by the kernel's statements: one per value


@register
class NormalizePass(Pass):
    """The equivalent shapes of a kernel made one before the plans are decided
    (``transforms/normalize.py``)."""

    name = "normalize"
    Options = NormalizeOptions

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("normalize")
        o = self.options
        kernel = normalize(value.kernel, guards=o.guards, loops=o.loops, pointers=o.pointers,
                           divisions=o.divisions)
        notes: tuple[str, ...] = ()
        if o.ranges:
            kernel, notes = split_live_ranges(kernel)
        return dataclasses.replace(value, kernel=kernel, notes=value.notes + notes)


@register
class UnrollPass(Pass):
    """Short counted loops whose counter indexes a private array or a ``__constant`` table
    unrolled, those arrays made scalars (``transforms/unroll.py``), so that the work-item
    loop around them is straight-line code; each decision goes to the plans. The build option
    ``-ppcl-no-unroll`` turns it off."""

    name = "unroll"

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("unroll")
        if not value.unroll:
            return value.switched_off("unroll", "-ppcl-no-unroll")
        result = unroll_loops(value.module, value.kernel)
        return dataclasses.replace(value, kernel=result.function,
                                   notes=value.notes + tuple(result.notes()),
                                   unrolled=value.unrolled + result.loops)


@register
class SelectsPass(Pass):
    """In a kernel whose stores scatter, an ``if``/``else`` whose branches assign the same
    places, of floating-point type, the same way, each a cheap value, made one sequence of
    ``select`` assignments (``transforms/selects.py``): no branch on the data; each decision
    goes to the plans. The build option ``-ppcl-no-selects`` turns it off."""

    name = "selects"

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("selects")
        if not value.selects:
            return value.switched_off("selects", "-ppcl-no-selects")
        result = branch_free(value.module, value.kernel)
        return dataclasses.replace(value, kernel=result.function,
                                   notes=value.notes + tuple(result.notes()))


@register
class MagicDivPass(Pass):
    """32-bit divisions and remainders by a launch constant as multiplies by magic numbers
    computed once at the start of the kernel (``transforms/magicdiv.py``), so that the
    work-item loop vectorizes; each decision goes to the plans."""

    name = "magicdiv"

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("magicdiv")
        result = magic_divisions(value.kernel, value.spec.narrow_ids)
        return dataclasses.replace(value, kernel=result.function,
                                   notes=value.notes + tuple(result.notes()),
                                   group_setup=value.group_setup | result.setup)


@register
class ComponentsPass(Pass):
    """Private vectors loaded from a buffer and used a component at a time loaded as scalar
    components (``transforms/components.py``); each decision goes to the plans."""

    name = "components"

    def run(self, value: KernelIR) -> KernelIR:
        value.needs_unformed("components")
        result = component_loads(value.kernel)
        return dataclasses.replace(value, kernel=result.function,
                                   notes=value.notes + tuple(result.notes()))


@dataclass(frozen=True)
class WorkgroupOptions:
    uniformity: bool = True  # false: treat every value as varying (for tests and comparisons)


@register
class WorkgroupPass(Pass):
    """Work-group formation (``transforms/workgroup.py``) for the spec's local size, with the
    uniformity analysis of the kernel (``analysis/uniformity.py``)."""

    name = "workgroup"
    Options = WorkgroupOptions

    def run(self, value: KernelIR) -> KernelIR:
        if value.formed is not None:
            raise PipelineError("pass 'workgroup' runs once")
        uniformity = analyze_kernel(value.module, value.kernel, value.spec.local_size) \
            if self.options.uniformity else None
        formed = form_workgroup(value.module, value.kernel, value.spec.local_size, uniformity,
                                value.group_setup, masked_loops=value.masked_loops)
        return dataclasses.replace(value, formed=formed)


@register
class ScalarizePass(Pass):
    """Vector temporaries of the vectorizable work-item loops inside group-level loops, with
    vector elements of ``char`` or ``short`` components or calling element-wise builtins on
    vectors, split into scalars (``transforms/scalarize.py``); each split goes to the plans.
    Vector context arrays whose components are then used one at a time are laid out
    component-major (``transforms/context.py``). The build option ``-ppcl-no-scalarize``
    turns it off."""

    name = "scalarize"

    def run(self, value: KernelIR) -> KernelIR:
        formed = value.needs_formed(self.name)
        if not value.scalarize:
            return value.switched_off("scalarize", "-ppcl-no-scalarize")
        body, notes = scalarize_hot_regions(formed.body, value.fast_math)
        # vectors the split regions read a component at a time, laid out component-major
        layouts = vector_context_layouts(body, dict(formed.context_vars), formed.context_layouts)
        return dataclasses.replace(
            value, formed=dataclasses.replace(
                formed, body=body, context_layouts=formed.context_layouts + layouts),
            notes=value.notes + notes)


@register
class SchedulePass(Pass):
    """Every decision the printer follows, recorded in the IR (``transforms/schedule.py``)."""

    name = "schedule"

    def run(self, value: KernelIR) -> KernelIR:
        formed = value.needs_formed(self.name)
        decided = schedule(value.module, formed, fast_math=value.fast_math,
                           narrow_ids=value.spec.narrow_ids)
        return dataclasses.replace(value, formed=decided)


@register
class SplitPass(Pass):
    """Input space splitting (``transforms/split.py``): work-item loops whose guards, clamps
    and id-dependent bounds are decided on a subdomain get a fast copy for it. The build
    option ``-ppcl-no-split`` turns it off."""

    name = "split"

    def run(self, value: KernelIR) -> KernelIR:
        formed = value.needs_formed(self.name)
        if not value.split:
            return value
        return dataclasses.replace(value, formed=split_kernel(formed, value.spec.narrow_ids))


@register
class SkipPass(Pass):
    """Blocks of lanes whose guard reads zero at unit stride skipped at once
    (``transforms/skip.py``), decided after the split so that its fast copy gets its own."""

    name = "skip"

    def run(self, value: KernelIR) -> KernelIR:
        formed = value.needs_formed(self.name)
        return dataclasses.replace(value, formed=skip_kernel(formed, value.spec.narrow_ids))


@register
class SinkPass(Pass):
    """A uniform store under the lanes' conditions run once after its work-item loop
    (``transforms/sink.py``), on each copy the split and skip passes left."""

    name = "sink"

    def run(self, value: KernelIR) -> KernelIR:
        formed = value.needs_formed(self.name)
        return dataclasses.replace(value, formed=sink_kernel(formed, value.spec.narrow_ids))


def cpu_pipeline(uniformity: bool = True) -> Pipeline:
    """The passes of a kernel build for the CPU device."""
    workgroup = WorkgroupPass() if uniformity else WorkgroupPass(uniformity=False)
    return Pipeline((InlinePass(), SwitchPass(), NormalizePass(), UnrollPass(), SelectsPass(),
                     MagicDivPass(),
                     ComponentsPass(), workgroup,
                     ScalarizePass(), SchedulePass(), SplitPass(), SkipPass(), SinkPass()))


CPU_PIPELINE = cpu_pipeline()


# ---------------------------------------------------------------- building a kernel


@dataclass(frozen=True)
class GeneratedKernel:
    """The C of one kernel build and what a device needs to run it."""

    source: str
    kernel_name: str
    entry: str
    arg_kinds: tuple[ArgKind, ...]
    local_mem_static_bytes: int  # the kernel's own __local variables
    block_static_bytes: int  # the group's block before the __local arguments (context arrays)
    local_size: tuple[int, int, int]
    printf_formats: tuple[PrintfFormat, ...]  # the format table of the printf records
    formed: FormedKernel
    pipeline: str  # the text of the pipeline that ran

    @property
    def uses_printf(self) -> bool:
        return bool(self.printf_formats)


def fast_math_of(options: BuildOptions) -> bool:
    return options.fast_relaxed_math or options.unsafe_math_optimizations


def kernel_ir(module: ir.Module, kernel_name: str, spec: KernelSpec, options: BuildOptions,
              debug: Debug = NO_DEBUG, pipeline: Pipeline | None = None,
              stream: TextIO | None = None) -> KernelIR:
    """``kernel_name`` of ``module`` after the passes of ``pipeline`` (``CPU_PIPELINE``), not
    printed as C. ``debug.shows("plans")``: the scheduling decisions go to ``stream``."""
    kernel = module.function(kernel_name)
    if kernel is None or not kernel.is_kernel:
        raise KeyError(f"no kernel named {kernel_name!r}")
    pipeline = CPU_PIPELINE if pipeline is None else pipeline
    value = KernelIR(module, kernel, spec, fast_math_of(options), split=not options.no_split,
                     unroll=not options.no_unroll, selects=not options.no_selects,
                     masked_loops=not options.no_masked_loops,
                     scalarize=not options.no_scalarize)
    result = pipeline.run(value, debug, stream)
    if debug.shows("plans") and result.formed is not None:
        out = stream if stream is not None else sys.stderr
        for line in result.notes + result.formed.plans:
            out.write(f"// ppcl plan {kernel_name}: {line}\n")
        for loop in result.formed.loop_plans:
            out.write(f"// ppcl plan {kernel_name}: {loop.line()}\n")
        for layout in result.formed.context_layouts:
            out.write(f"// ppcl plan {kernel_name}: {layout.line()}\n")
    return result


def lower_kernel(module: ir.Module, kernel_name: str, spec: KernelSpec, options: BuildOptions,
                 debug: Debug = NO_DEBUG, pipeline: Pipeline | None = None,
                 stream: TextIO | None = None) -> GeneratedKernel:
    """Build ``kernel_name`` of ``module`` for ``spec``: the passes of ``pipeline`` (default
    ``CPU_PIPELINE``), then the C translation unit. ``debug`` says what to show on ``stream``
    (stderr): the IR after each pass, their times, the plans and the C."""
    pipeline = CPU_PIPELINE if pipeline is None else pipeline
    value = kernel_ir(module, kernel_name, spec, options, debug, pipeline, stream)
    formed = value.needs_formed("C printer")
    out = stream if stream is not None else sys.stderr
    start = time.perf_counter()
    unit = print_c_unit(module, formed, zero_offset=spec.zero_offset,
                        fast_math=value.fast_math, narrow_ids=spec.narrow_ids)
    if debug.shows("time"):
        out.write(f"// ppcl C printer: {(time.perf_counter() - start) * 1e3:.3f} ms\n")
    if debug.shows("c"):
        out.write(unit.source)
    return GeneratedKernel(
        source=unit.source,
        kernel_name=kernel_name,
        entry=unit.entry,
        arg_kinds=unit.arg_kinds,
        local_mem_static_bytes=formed.local_static_bytes,
        block_static_bytes=max(formed.block_bytes, formed.local_static_bytes),
        local_size=formed.local_size,
        printf_formats=unit.printf_formats,
        formed=formed,
        pipeline=str(pipeline),
    )
