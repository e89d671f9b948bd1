"""``pyopencl.reduction``: ``ReductionKernel(ctx, dtype_out, neutral, reduce_expr, map_expr,
arguments)`` folds ``map_expr`` (over index ``i``) with the associative ``reduce_expr`` (over
``a`` and ``b``).

Two stages, as in PyOpenCL, laid out per device kind (``reduction_layout``).

- **CPU devices:** each work-item of the first stage folds a contiguous chunk of indices into
  ``LANES`` independent accumulators, lane ``l`` taking the indices ``l`` modulo ``LANES``:
  the lane loop has no dependence between iterations, so the C compiler keeps the accumulators
  in vector registers (four vectors of the device's native width) and reads the chunk with
  contiguous vector loads, with no bounds checks and no accumulator in memory. The launch has a
  few work-items per compute unit (groups of one, claimed by the device's threads as they
  finish); a small reduction has one, which writes the result itself, in one launch.
- **GPU devices:** a few groups of ``GROUP`` work-items per compute unit; every work-item of a
  group folds the same number of indices, stepping by ``GROUP``, so a group reads coalesced,
  four indices folded before each update of its accumulator.

The second stage, one work-item, folds the partials (and, on a GPU, the few indices the first
stage left over) into the result.
"""

from __future__ import annotations

import builtins
import importlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.elementwise import (
    GROUP,
    array_args,
    arrays_and_queue,
    build_kernel,
    declarators,
    is_gpu,
    range_indices,
    record_event,
    wait_list,
)
from ppcl.runtime.errors import make_error
from ppcl.tools import Argument, VectorArg, complex_preamble, dtype_to_ctype, parse_arg_list


class ReductionKernel:
    """``pyopencl.reduction.ReductionKernel``; calling it returns a 0-d array holding the
    result (of the type of the first array argument, or ``out``)."""

    def __init__(self, ctx: cl.Context, dtype_out: Any, neutral: str, reduce_expr: str,
                 map_expr: str | None = None, arguments: str | list[Argument] | None = None,
                 name: str = "reduce_kernel", options: Any = None, preamble: str = "") -> None:
        self.context = ctx
        self.dtype_out = np.dtype(dtype_out)
        self.neutral = neutral
        self.reduce_expr = reduce_expr
        self.args = parse_arg_list(arguments) if arguments is not None else []
        if map_expr is None:
            vectors = [a for a in self.args if isinstance(a, VectorArg)]
            if len(vectors) != 1:
                raise make_error("ReductionKernel", "INVALID_VALUE",
                                 "map_expr may be left out only with one array argument")
            map_expr = f"{vectors[0].name}[i]"
        self.map_expr = map_expr
        self.name = name
        self.options = options
        self.preamble = preamble
        self._built: dict[tuple[bool, int, bool], cl.Kernel] = {}

    def kernel(self, ranged: bool, lanes: int, finish: bool = False) -> cl.Kernel:
        """The first stage for a layout of ``lanes`` accumulators per work-item (0: a GPU's
        groups), or the second (``finish``), built once per kernel object: no source text per
        launch."""
        key = (ranged, lanes, finish)
        kernel = self._built.get(key)
        if kernel is None:
            name = f"{self.name}_finish" if finish else self.name
            kernel = build_kernel(self.context, self.source(ranged, lanes), name, self.options)
            self._built[key] = kernel
        return kernel

    def source(self, ranged: bool, lanes: int = 0) -> str:
        out_t = dtype_to_ctype(self.dtype_out)
        params, prelude = declarators(self.args)
        if ranged:
            params += ["long first__", "long step__"]

        def at(position: str) -> str:  # the array index of loop position ``position``
            # parenthesized: it replaces every ``i`` of map_expr, as in ``i * x[i]``
            return f"(first__ + ({position}) * step__)" if ranged else f"({position})"

        header = complex_preamble([self.dtype_out, *(a.dtype for a in self.args)])
        setup = "\n  ".join(prelude)
        if lanes:
            stage = _chunked_stage(self.name, ", ".join(
                [*params, f"__global {out_t} *partials__", "volatile __global uint *done__",
                 "uint ticket__", "long per_item__", "long n__", f"__global {out_t} *out__base",
                 "long out__offset"]), setup, out_t, at, lanes)
        else:
            stage = _strided_stage(self.name, ", ".join(
                [*params, f"__global {out_t} *partials__", "long per_item__"]), setup, out_t,
                at)
        return f"""{header}
{self.preamble}
#define NEUTRAL ({self.neutral})
#define REDUCE(a, b) ({self.reduce_expr})
#define READ_AND_MAP(i) ({self.map_expr})
{stage}
__kernel void {self.name}_finish({", ".join([*params, f"__global const {out_t} *partials__",
                                             "long partial_count__", "long first_tail__",
                                             "long n__", f"__global {out_t} *out__base",
                                             "long out__offset"])})
{{
  {setup}
  {out_t} acc__ = NEUTRAL;
  for (long g__ = 0; g__ < partial_count__; g__++)
    acc__ = REDUCE(acc__, partials__[g__]);
  for (long i__ = first_tail__; i__ < n__; i__++)
    acc__ = REDUCE(acc__, READ_AND_MAP({at("i__")}));
  out__base[out__offset] = acc__;
}}
"""

    def __call__(self, *args: Any, queue: cl.CommandQueue | None = None,
                 wait_for: Sequence[cl.Event] | None = None, return_event: bool = False,
                 range: slice | None = None, slice: slice | None = None,  # noqa: A002
                 out: Any = None, allocator: Any = None) -> Any:
        routine = "ReductionKernel"
        values = array_args(self.args, args, routine)  # first: it names a wrong argument
        arrays, queue = arrays_and_queue(self.args, args, queue, routine, fallback=out)
        if slice is not None:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE", "slice needs an array argument")
            range = type(slice)(*slice.indices(arrays[0].size))
        if range is not None:
            first, step, count = range_indices(range, routine)
        elif arrays:
            count = arrays[0].size
        else:
            raise make_error(routine, "INVALID_VALUE",
                             "without an array argument, give range=slice(...)")
        if out is None:
            array_type = type(arrays[0]) if arrays else _array_class()
            out = array_type(queue, (), self.dtype_out, allocator=allocator)
        elif out.dtype != self.dtype_out or out.size != 1:
            raise make_error(routine, "INVALID_VALUE",
                             f"out must hold one {self.dtype_out}, got {out.dtype} {out.shape}")
        event = self.run(queue, values, count, out.base_data,
                         out.offset // self.dtype_out.itemsize,
                         range is not None and (first, step) or None,
                         wait_list([*arrays, out], wait_for))
        record_event(event, [*arrays, out])
        return (out, event) if return_event else out

    def run(self, queue: cl.CommandQueue, values: list[Any], count: int, out_buffer: Any,
            out_offset: int, ranged: tuple[int, int] | None,
            wait_for: Sequence[cl.Event] | None) -> cl.Event:
        """Enqueue the reduction on prepared argument values, writing into ``out_buffer``."""
        layout = reduction_layout(queue.device, count, self.dtype_out.itemsize)
        if ranged is not None:
            values = [*values, np.int64(ranged[0]), np.int64(ranged[1])]
        stage = self.kernel(ranged is not None, layout.lanes)
        if layout.lanes:
            partials, done, ticket = _scratch(queue, layout.items * self.dtype_out.itemsize)
            return stage(queue, (layout.items,), (1,), *values, partials, done,
                         np.uint32(ticket), np.int64(layout.per_item), np.int64(count),
                         out_buffer, np.int64(out_offset), wait_for=wait_for)
        partials = cl.Buffer(self.context, cl.mem_flags.READ_WRITE,
                             builtins.max(layout.items, 1) * self.dtype_out.itemsize)
        if layout.items:
            # the finish waits for the stage's event: an out-of-order queue orders nothing
            wait_for = [stage(queue, (layout.items,), (GROUP,), *values, partials,
                              np.int64(layout.per_item), wait_for=wait_for)]
        finish = self.kernel(ranged is not None, layout.lanes, finish=True)
        return finish(queue, (1,), (1,), *values, partials, np.int64(layout.items),
                      np.int64(layout.covered(count)), np.int64(count), out_buffer,
                      np.int64(out_offset), wait_for=wait_for)


def _array_class() -> type:
    """``ppcl.array.Array``, the type of the result of a call with no array argument to take
    it from (``map_expr="i"`` over ``range=``). ``ppcl.array`` sits above this module and
    imports it, so it is looked up when first needed, as PyOpenCL's reduction imports
    ``pyopencl.array`` inside its call."""
    return importlib.import_module("ppcl.array").Array  # type: ignore[no-any-return]


TICKET_BITS = 20
COUNT_BITS = 32 - TICKET_BITS
"""The completion word of the CPU stage holds a launch's ticket in its high ``TICKET_BITS``
and how many of its work-items finished in the low ``COUNT_BITS`` (so at most 4095
work-items)."""
MAX_ITEMS = (1 << COUNT_BITS) - 1


class _Scratch:
    """A queue's partials and completion word for the CPU stage, reused by its launches: an
    in-order queue runs them one at a time."""

    def __init__(self, context: cl.Context, nbytes: int) -> None:
        self.partials = cl.Buffer(context, cl.mem_flags.READ_WRITE, nbytes)
        self.nbytes = nbytes
        self.done = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                              hostbuf=np.zeros(1, np.uint32))
        self.ticket = 0

    def next_ticket(self) -> int:
        """A ticket unlike the previous launch's (never 0, the word's first value)."""
        self.ticket = self.ticket % ((1 << TICKET_BITS) - 1) + 1
        return self.ticket


_scratches: weakref.WeakKeyDictionary[cl.CommandQueue, _Scratch] = \
    weakref.WeakKeyDictionary()


def _scratch(queue: cl.CommandQueue, nbytes: int) -> tuple[Any, Any, int]:
    """(partials buffer of at least ``nbytes``, completion word, ticket) for one launch on
    ``queue``: the queue's own when it runs commands in order, else fresh ones."""
    if queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
        fresh = _Scratch(queue.context, builtins.max(nbytes, 1))
        return fresh.partials, fresh.done, fresh.next_ticket()
    scratch = _scratches.get(queue)
    if scratch is None or scratch.nbytes < nbytes:
        # a launch still waiting to run keeps the buffers it was given alive
        scratch = _scratches[queue] = _Scratch(queue.context, builtins.max(nbytes, 256))
    return scratch.partials, scratch.done, scratch.next_ticket()


def _chunked_stage(name: str, params: str, setup: str, out_t: str, at: Any,
                   lanes: int) -> str:
    """The CPU reduction, one launch: work-item ``g`` folds positions ``[g * per_item__,
    (g + 1) * per_item__)`` (the last stops at ``n__``) into ``lanes`` accumulators, lane ``l``
    taking the positions ``l`` modulo ``lanes`` of each run of ``lanes``, then the few positions
    left and the lanes into its partial; the work-item that finishes last (counted in the
    completion word ``done__`` under this launch's ``ticket__``, so a launch cut short leaves
    nothing the next one would count) folds the partials into the result."""
    return f"""__kernel void {name}({params})
{{
  {setup}
  long start__ = (long)get_global_id(0) * per_item__;
  long stop__ = start__ + per_item__;
  if (stop__ > n__) stop__ = n__;
  {out_t} lane__[{lanes}];
  for (int l__ = 0; l__ < {lanes}; l__++) lane__[l__] = NEUTRAL;
  long p__ = start__;
  for (; p__ + {lanes} <= stop__; p__ += {lanes})
    #pragma unroll {lanes}  /* unrolled, the lanes stay in vector registers */
    for (int l__ = 0; l__ < {lanes}; l__++)
      lane__[l__] = REDUCE(lane__[l__], READ_AND_MAP({at("p__ + l__")}));
  {out_t} acc__ = NEUTRAL;
  for (; p__ < stop__; p__++)
    acc__ = REDUCE(acc__, READ_AND_MAP({at("p__")}));
  for (int l__ = 0; l__ < {lanes}; l__++)
    acc__ = REDUCE(acc__, lane__[l__]);
  partials__[get_global_id(0)] = acc__;
  /* count this work-item done, in a word that a launch with another ticket restarts */
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  uint seen__ = atomic_or(done__, 0u), next__;
  for (;;) {{
    next__ = (seen__ >> {COUNT_BITS}) == ticket__ ? seen__ + 1u
                                               : (ticket__ << {COUNT_BITS}) | 1u;
    uint was__ = atomic_cmpxchg(done__, seen__, next__);
    if (was__ == seen__) break;
    seen__ = was__;
  }}
  if ((next__ & {MAX_ITEMS}u) != (uint)get_global_size(0)) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);  /* the last to finish folds every partial, in order */
  {out_t} total__ = partials__[0];
  for (long g__ = 1; g__ < (long)get_global_size(0); g__++)
    total__ = REDUCE(total__, partials__[g__]);
  out__base[out__offset] = total__;
}}
"""


def _strided_stage(name: str, params: str, setup: str, out_t: str, at: Any) -> str:
    """The GPU first stage: every work-item of a group folds ``per_item__`` positions stepping
    by the group size, so the group reads coalesced; the positions past the groups' are left
    to the second stage."""
    return f"""__kernel void {name}({params})
{{
  {setup}
  const long size__ = {GROUP};
  long base__ = (long)get_group_id(0) * per_item__ * size__ + get_local_id(0);
  {out_t} acc__ = NEUTRAL;
  long k__ = 0;
  for (; k__ + 4 <= per_item__; k__ += 4) {{  /* four loads a store of the accumulator */
    {out_t} four__ = READ_AND_MAP({at("base__ + k__ * size__")});
    four__ = REDUCE(four__, READ_AND_MAP({at("base__ + (k__ + 1) * size__")}));
    four__ = REDUCE(four__, READ_AND_MAP({at("base__ + (k__ + 2) * size__")}));
    four__ = REDUCE(four__, READ_AND_MAP({at("base__ + (k__ + 3) * size__")}));
    acc__ = REDUCE(acc__, four__);
  }}
  for (; k__ < per_item__; k__++)
    acc__ = REDUCE(acc__, READ_AND_MAP({at("base__ + k__ * size__")}));
  partials__[get_global_id(0)] = acc__;
}}
"""


ITEMS_PER_UNIT = 4
"""First-stage groups per compute unit on a GPU."""

CPU_ITEMS_PER_UNIT = 32
"""First-stage work-items per core on a CPU: many more pieces than threads, so a thread slowed
by other load (or by a virtual machine's scheduling) leaves its last pieces to the others.
A 16M-float ``abs(x).sum()`` on the GPU machine's CPU, median of 24 calls against 4 pieces a
core: 0.52 against 0.55 ms on 16 cores, 1.90 against 1.98 ms on 2."""

MIN_CHUNK_BYTES = 1 << 16
"""The least a CPU work-item folds (64 KiB of accumulator-sized values): below it, waking
another thread costs more than the work it would take."""


@dataclass(frozen=True)
class Layout:
    """How the first stage of a reduction of ``n`` positions is laid out."""

    lanes: int  # accumulators per work-item on a CPU (chunks of positions), 0 on a GPU
    items: int  # work-items of the first stage (on a GPU, whole groups of ``GROUP``)
    per_item: int  # positions each work-item folds

    def covered(self, n: int) -> int:
        """The positions the first stage folds; the second stage takes the rest."""
        return builtins.min(n, self.items * self.per_item)


def folds_in_one_launch(device: cl.Device) -> bool:
    """Whether the CPU layout fits ``device``: its one launch has the last work-item fold every
    partial, which needs the other work-groups' writes seen through a fence and an atomic.
    OpenCL 1.2 does not promise that; a CPU device whose threads share coherent memory gives
    it (``fenced_writes_cross_groups``). GPUs, other accelerators and the checking device,
    which holds kernels to the 1.2 memory model, take two launches."""
    if is_gpu(device) or not device.type & cl.device_type.CPU:
        return False
    return bool(device.backend.info.fenced_writes_cross_groups)


def reduction_layout(device: cl.Device, n: int, itemsize: int) -> Layout:
    """The first stage's layout for ``n`` positions folded into values of ``itemsize``
    bytes, from the device's kind, compute units and native vector width."""
    units = builtins.max(1, device.max_compute_units)
    if not folds_in_one_launch(device):
        groups = ITEMS_PER_UNIT * units
        per_item = n // (groups * GROUP)
        if per_item == 0:
            groups = n // GROUP
            per_item = 1 if groups else 0
        return Layout(0, groups * GROUP if per_item else 0, per_item)
    lanes = accumulator_lanes(device, itemsize)
    least = builtins.max(lanes, MIN_CHUNK_BYTES // itemsize)
    items = builtins.max(1, builtins.min(CPU_ITEMS_PER_UNIT * units, n // least, MAX_ITEMS))
    per_item = -(-n // items)
    per_item = -(-per_item // lanes) * lanes  # whole runs of lanes, aligned chunk starts
    return Layout(lanes, -(-n // per_item) if n else 1, per_item)


def accumulator_lanes(device: cl.Device, itemsize: int) -> int:
    """Accumulators per CPU work-item: four native vectors' worth of ``itemsize`` values (four
    independent chains of vector additions hide the adder's latency), 4 to 64."""
    vector_bytes = builtins.max(16, device.native_vector_width_char or 16)
    return builtins.min(64, builtins.max(4, 4 * vector_bytes // builtins.max(1, itemsize)))


def neutral_of(dtype: np.dtype, kind: str) -> str:
    """The C neutral element of ``kind`` (``sum``, ``max``, ``min``) for ``dtype``."""
    if kind == "sum":
        return scalar_literal(dtype, 0)
    if dtype.kind == "f":
        return "-INFINITY" if kind == "max" else "INFINITY"
    info = np.iinfo(dtype)
    value = info.min if kind == "max" else info.max
    return f"(({dtype_to_ctype(dtype)}){value}{'L' if dtype.itemsize == 8 else ''})" \
        if value >= 0 or dtype.itemsize < 8 else f"(({dtype_to_ctype(dtype)})({value + 1}L - 1))"


def scalar_literal(dtype: np.dtype, value: Any) -> str:
    """A C literal of ``value`` typed ``dtype``."""
    ctype = dtype_to_ctype(dtype)
    if dtype.kind == "c":
        real = "double" if dtype.itemsize == 16 else "float"
        return f"(({ctype})(({real}){complex(value).real!r}, ({real}){complex(value).imag!r}))"
    return f"(({ctype}){value!r})"


__all__ = ["ReductionKernel", "neutral_of", "scalar_literal"]
