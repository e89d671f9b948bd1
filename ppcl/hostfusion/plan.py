"""Which rewrites of one launch are worth trying, decided from the analyses and the device model.

For a kernel launched over an NDRange with given buffers, the plan asks, in the paper's order:

1. thread coarsening (Algorithms 1 and 2): the dimension whose coarsening shares the most
   work uniform along it, never the dimension a data-parallel CPU vectorizes, on a GPU only
   while a group keeps at least one warp and whole warps;
2. data layout (Algorithm 3): for each buffer argument that the alias table shows flowing only
   through transfers and this kernel, whether the transposed view has the smaller reuse
   distance under the device's execution order (a buffer of vectors is viewed as rows of
   their components, so its transpose is the structure of arrays);
3. holistic vectorization (Algorithm 4): the width the SIMD registers, the register estimate
   and the kernel's explicit vector code allow; 1 where the device already vectorizes across
   work-items.

Each yes is a :class:`Rewrite` with its reason, each no a line of ``notes``; the candidates are
the rewrites combined and, when there are several kinds, each kind alone. Applying them
(:func:`build_function`) is a chain of pure transforms; the launch shape and the trailing
arguments they add follow from the same decisions (:class:`Variant`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.compiler.analysis.buffers import buffer_accesses
from ppcl.compiler.analysis.callgraph import helpers_using_workitems, user_calls
from ppcl.compiler.analysis.layout import is_site
from ppcl.compiler.analysis.order import ExecutionOrder
from ppcl.compiler.analysis.reuse import better_layout
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType, ScalarType, VectorType
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms import coarsen as coarsening
from ppcl.compiler.transforms import layout as layouts
from ppcl.compiler.transforms import vectorize as vectorizing
from ppcl.devices.interface import NDRange
from ppcl.hostfusion.aliases import AliasTable
from ppcl.hostfusion.model import kernel_order

MAX_LAYOUTS_ALONE = 3  # up to this many buffers to re-lay out, each is also tried alone
MIN_GAIN = 1.05  # a coarsening predicted to save less than 5% of a work-item's work is not tried


@dataclass(frozen=True)
class Rewrite:
    """One decision: ``kind`` (coarsen, layout, vectorize), its parameters and its reason."""

    kind: str
    what: str
    reason: str
    dim: int = 0
    factor: int = 1
    needs_divisible: bool = False
    param: str = ""
    arg: int = -1
    facts: Any = None  # the transform's facts (TransposeFacts of a layout)
    rows: int = 0
    columns: int = 0
    columns_arg: int = -1  # the scalar argument the column count comes from (-1: a literal)
    dtype: Any = None
    writes: bool = False
    vector: bool = False  # a layout of vectors: read component by component first
    partners: tuple[int, ...] = ()  # arguments a buffer may swap with: same layout

    @property
    def layout(self) -> str:
        """The layout a layout rewrite stores its buffer in, in words."""
        if self.vector or self.columns_arg < 0:  # structures of a literal size
            return f"structure of arrays ({self.columns} arrays of {self.rows})"
        return f"transposed ({self.columns} x {self.rows}: contiguous rows)"


@dataclass
class Candidates:
    """The plan of one launch: rewrites that passed the model, and why the others did not."""

    rewrites: list[Rewrite] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)  # buffer -> why its layout stays

    def variants(self) -> list[tuple[Rewrite, ...]]:
        """The combinations to try: all together, then each kind alone when there are several,
        then each buffer's layout alone when there are a few (one buffer's layout may pay
        where another's costs more than it saves)."""
        if not self.rewrites:
            return []
        kinds = sorted({r.kind for r in self.rewrites}, key=_KIND_ORDER.index)
        combos = [tuple(self.rewrites)]
        if len(kinds) > 1:
            combos += [tuple(r for r in self.rewrites if r.kind == kind) for kind in kinds]
        layouts = [r for r in self.rewrites if r.kind == "layout"]
        groups: list[tuple[Rewrite, ...]] = []
        for r in layouts:  # partners stay together: a swapped buffer keeps its layout
            if not any(r is o for g in groups for o in g):
                groups.append(tuple(o for o in layouts if o is r or o.arg in r.partners))
        if 1 < len(groups) <= MAX_LAYOUTS_ALONE:
            combos += groups
        return combos


_KIND_ORDER = ["layout", "coarsen", "vectorize"]


def kernel_function(program: Any, name: str) -> ir.Function:
    function = program._module.function(name)
    assert function is not None and function.is_kernel
    return function


def plan(module: ir.Module, fn: ir.Function, ndrange: NDRange, args: Sequence[Any],
         order: ExecutionOrder, aliases: AliasTable, kernel: Any) -> Candidates:
    """The candidate rewrites of ``fn`` (a kernel of ``module``) launched over ``ndrange``
    with ``args``."""
    result = Candidates()
    values = scalar_values(fn, args)
    formed = kernel_ir(module, fn.name, KernelSpec(ndrange.local_size), kernel.program._build_options)
    loops = formed.needs_formed("host fusion").loops
    order, why = kernel_order(order, loops)
    if why:
        result.notes.append(f"model: {why}")
    kept = {loop.loc for loop in loops if not loop.interchanged}
    _plan_layout(fn, ndrange, args, values, order, aliases, kernel, result,
                 _Relaid(module, fn, ndrange, kernel.program._build_options, kept))
    asking = user_calls(fn.body) & helpers_using_workitems(module)
    if asking:
        result.notes.append(f"coarsen, vectorize: the helpers {', '.join(sorted(asking))} ask "
                            "for work-item ids the rewrite would have to remap")
        return result
    _plan_coarsen(fn, ndrange, order, result)
    if not any(r.kind == "coarsen" and r.dim == order.vector_dim for r in result.rewrites):
        _plan_vectorize(fn, ndrange, order, result)
    return result


def scalar_values(fn: ir.Function, args: Sequence[Any]) -> dict[str, int]:
    """The integer scalar arguments by parameter name (what the affine analyses use)."""
    values: dict[str, int] = {}
    for param, arg in zip(fn.params, args):
        if isinstance(param.type, ScalarType) and param.type.is_integer and hasattr(arg, "data"):
            dtype = np.dtype(param.type.numpy_name)
            values[param.name] = int(np.frombuffer(arg.data[:dtype.itemsize], dtype)[0])
    return values


def _plan_coarsen(fn: ir.Function, ndrange: NDRange, order: ExecutionOrder,
                  result: Candidates) -> None:
    """Algorithms 1 and 2 (``coarsen.choose``), then a predicted gain large enough to try."""
    facts = coarsening.coarsen_facts(fn)
    dims = ndrange.work_dim
    chosen, why = coarsening.choose(facts, order, ndrange.local_size[:dims],
                                    ndrange.global_size[:dims])
    if chosen is None:
        result.notes.append(f"coarsen: {why}")
        return
    dim, factor = chosen
    dim_facts = facts.dims[dim]
    saved = dim_facts.shared_cost * (1 - 1 / factor)
    gain = dim_facts.total_cost / max(dim_facts.total_cost - saved, 1)
    if gain < MIN_GAIN:
        result.notes.append(f"coarsen dimension {dim} by {factor}: predicted gain {gain:.2f}x "
                            f"is below {MIN_GAIN}x ({dim_facts.jam})")
        return
    jammed = " with jam" if dim_facts.jams else ""
    result.rewrites.append(Rewrite("coarsen", f"dimension {dim} by {factor}{jammed}",
                                   f"predicted {gain:.2f}x; {why}",
                                   dim=dim, factor=factor,
                                   needs_divisible=dim_facts.needs_divisible))


def _keep(result: Candidates, param: str, why: str) -> None:
    result.kept[param] = why
    result.notes.append(f"layout of {param}: {why}")


@dataclass
class _Relaid:
    """Work-group formation of the kernel with its layouts changed: which loops the original
    kept inside each work-item move out of the work-item loop then (an address consecutive
    along x only in the transposed layout), so the loop's lanes vectorize, which reuse
    distances do not see."""

    module: ir.Module
    fn: ir.Function
    ndrange: NDRange
    options: Any
    kept: set[Any]  # locations of the loops the original keeps inside each work-item
    moved: set[Any] | None = None
    failure: str = ""  # why the relaid kernel did not form, shown in the notes

    def moves(self, ready: Sequence[tuple[int, ir.Param, Any, Any, bool]]) -> set[Any]:
        """The locations of the loops that move out with every ``ready`` layout changed."""
        if self.moved is not None:
            return self.moved
        self.moved = set()
        if not self.kept or not ready:
            return self.moved
        trial = self.fn
        name = f"{self.fn.name}__relaid"
        try:
            for _index, param, _mem, _facts, vector in ready:
                if vector:
                    scalar = layouts.vector_components(trial, param.name)
                    if isinstance(scalar, str):
                        return self.moved
                    trial = scalar
                facts = layouts.transposable(trial, param.name)
                if isinstance(facts, str):
                    return self.moved
                trial = layouts.transpose(trial, facts, name)
            formed = kernel_ir(self.module.with_only_kernel(trial), name,
                               KernelSpec(self.ndrange.local_size), self.options)
        except Exception as error:  # a guess for the plan only: the guard builds what it tries
            self.failure = f"{type(error).__name__}: {error}"
            return self.moved
        self.moved = {loop.loc for loop in formed.needs_formed("host fusion").loops
                      if loop.interchanged and loop.loc in self.kept}
        self.moved |= {loc for loc in formed.unrolled if loc in self.kept}  # straight-line
        return self.moved

    def loop_of(self, param: str, moved: set[Any]) -> Any:
        """A moved loop holding an access of ``param``, None when none does."""
        for node in walk(layouts.indexed(self.fn, param).body):
            if isinstance(node, ir.For | ir.While | ir.DoWhile) and node.loc in moved \
                    and any(is_site(n, param) for n in walk(node)):
                return node.loc
        return None


def _plan_layout(fn: ir.Function, ndrange: NDRange, args: Sequence[Any],
                 values: Mapping[str, int], order: ExecutionOrder, aliases: AliasTable,
                 kernel: Any, result: Candidates, relaid: _Relaid | None = None) -> None:
    """Each buffer argument's layout; arguments that would be stored in the same layout (one
    element type, as many rows and columns) are partners: a buffer may pass through any of
    them (a time step swapping its two buffers), and they are tried together."""
    ready = []
    for index, (param, arg) in enumerate(zip(fn.params, args)):
        if not isinstance(param.type, PointerType) or getattr(arg, "owner", None) is None:
            continue
        viewed = fn  # vectors are read as rows of their components (the structure of arrays)
        vector = isinstance(param.type.pointee, VectorType)
        if vector:
            scalar = layouts.vector_components(fn, param.name)
            if isinstance(scalar, str):
                _keep(result, param.name, scalar)
                continue
            viewed = scalar
        facts = layouts.transposable(viewed, param.name)
        if isinstance(facts, str):
            _keep(result, param.name, facts)
            continue
        mem = arg.owner
        columns = facts.column_count(values)
        itemsize = np.dtype(facts.element.numpy_name).itemsize
        elements = mem.size // itemsize
        if columns is None or columns <= 0 or elements % columns or mem.size % itemsize:
            _keep(result, param.name, f"{elements} elements are not whole rows of {columns} "
                  "columns")
            continue
        if not facts.holds(ndrange.global_size, ndrange.global_offset, values, elements):
            _keep(result, param.name, f"this launch may index past the {columns} columns")
            continue
        ready.append((index, param, mem, facts, viewed, vector, elements, columns))
    views = {i: (np.dtype(f.element.numpy_name), c, e // c)
             for i, _p, _m, f, _v, _vec, e, c in ready}
    for index, param, mem, facts, viewed, vector, elements, columns in ready:
        partners = tuple(i for i in views if i != index and views[i] == views[index])
        alone, why = aliases.exclusive(mem, kernel, index, partners)
        if not alone:
            _keep(result, param.name, why)
            continue
        transposed, reason = better_layout(viewed, param.name, order, ndrange.global_size,
                                           ndrange.local_size, values, facts, elements)
        if not transposed and relaid is not None:
            loop = relaid.loop_of(param.name, relaid.moves(
                [(i, p, m, f, v) for i, p, m, f, _w, v, _e, _c in ready]))
            failed = f"layout: the kernel with the layouts changed does not form " \
                     f"({relaid.failure})"
            if relaid.failure and failed not in result.notes:
                result.notes.append(failed)
            if loop is not None:
                transposed = True
                reason = (f"{reason}; but with the layouts changed the loop at {loop} runs "
                          "across work-items, where the original runs it inside each one")
        if not transposed:
            _keep(result, param.name, f"kept ({reason})")
            continue
        rows = elements // columns
        columns_arg = -1
        if isinstance(facts.columns, ir.VarRef):
            columns_arg = next(i for i, p in enumerate(fn.params) if p.name == facts.columns.name)
        assert isinstance(param.type, PointerType)
        components = f" ({param.type.pointee} components)" if vector else ""
        result.rewrites.append(Rewrite(
            "layout", f"{param.name} (argument {index}) as the transpose of {rows} x "
            f"{columns}{components}",
            f"{reason}; {why}", param=param.name, arg=index, facts=facts, rows=rows,
            columns=columns, columns_arg=columns_arg, dtype=np.dtype(facts.element.numpy_name),
            writes=_writes(fn, param.name), vector=vector, partners=partners))


def _writes(fn: ir.Function, name: str) -> bool:
    access = buffer_accesses(fn).get(name)
    return access is None or access.writes


def _plan_vectorize(fn: ir.Function, ndrange: NDRange, order: ExecutionOrder,
                    result: Candidates) -> None:
    facts = vectorizing.vectorize_facts(fn)
    if not facts.possible:
        result.notes.append(f"vectorize: {facts.reason}")
        return
    width, why = vectorizing.choose_width(facts, order, 4)
    local0 = ndrange.local_size[0]
    while width > 1 and local0 % width:
        width //= 2
    if width <= 1:
        result.notes.append(f"vectorize: {why}")
        return
    result.rewrites.append(Rewrite("vectorize", f"width {width} along dimension 0",
                                   f"{facts.reason}; {why}", dim=0, factor=width))


@dataclass(frozen=True)
class Variant:
    """A candidate ready to build: the rewritten kernel, its NDRange and trailing arguments."""

    label: str
    rewrites: tuple[Rewrite, ...]
    function: ir.Function
    ndrange: NDRange
    extras: tuple[int, ...]  # the values of the trailing ulong parameters, in order


def build_variant(fn: ir.Function, rewrites: tuple[Rewrite, ...], ndrange: NDRange,
                  name: str) -> Variant:
    """Apply ``rewrites`` (layouts, then coarsening, then vectorization) to ``fn``."""
    extras: list[int] = []
    for r in (r for r in rewrites if r.kind == "layout"):
        if r.vector:
            scalar = layouts.vector_components(fn, r.param)
            if isinstance(scalar, str):
                raise ValueError(f"the vectors of {r.param}: {scalar}")
            fn = scalar
        fn = layouts.transpose(fn, r.facts, name)
        extras.append(r.rows)
    for r in (r for r in rewrites if r.kind == "coarsen"):
        extras.append(ndrange.global_size[r.dim])
        fn = coarsening.coarsen(fn, r.dim, r.factor, name)
        ndrange = _narrowed(ndrange, r.dim, r.factor, r.needs_divisible)
    for r in (r for r in rewrites if r.kind == "vectorize"):
        extras.append(ndrange.global_size[0])
        fn = vectorizing.vectorize(fn, r.factor, name)
        ndrange = _narrowed(ndrange, 0, r.factor, True)
    label = " + ".join(f"{r.kind} {r.what}" for r in rewrites)
    return Variant(label, rewrites, fn, ndrange, tuple(extras))


def _narrowed(ndrange: NDRange, dim: int, factor: int, divide_local: bool) -> NDRange:
    """The NDRange of a kernel whose work-items each do ``factor`` along ``dim``."""
    local = list(ndrange.local_size)
    size = list(ndrange.global_size)
    if divide_local or local[dim] % factor == 0:
        local[dim] = max(local[dim] // factor, 1)
    else:
        local[dim] = 1
    merged = -(-size[dim] // factor)
    size[dim] = -(-merged // local[dim]) * local[dim]
    return NDRange(ndrange.work_dim, (size[0], size[1], size[2]), (local[0], local[1], local[2]),
                   ndrange.global_offset)
