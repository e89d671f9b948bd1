"""``pyopencl.reduction``: ``ReductionKernel(ctx, dtype_out, neutral, reduce_expr, map_expr,
arguments)`` folds ``map_expr`` (over index ``i``) with the associative ``reduce_expr`` (over
``a`` and ``b``).

Two stages, as in PyOpenCL, laid out for a CPU: the first stage runs a few groups of ``GROUP``
work-items per compute unit; every work-item of a group folds the same number of indices,
stepping by ``GROUP``, so the group's work-item loop (innermost, vectorized by the compiler)
reads contiguous vectors and needs neither bounds checks nor barriers, and writes one partial;
each work-item folds four indices before touching its accumulator (which the compiler keeps in
a per-work-item array), which measured 15% faster on a two-stream dot.
The second stage, one work-item, folds the partials and the few indices the first stage left
over into the result. The same layout reads coalesced on a GPU.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.elementwise import GROUP, array_args, arrays_and_queue, build_kernel, declarators
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
        self._built: dict[bool, tuple[cl.Kernel, cl.Kernel]] = {}  # by ``ranged``

    def kernels(self, ranged: bool) -> tuple[cl.Kernel, cl.Kernel]:
        """The two stages, built once per kernel object: no source text per launch."""
        stages = self._built.get(ranged)
        if stages is None:
            source = self.source(ranged)
            stages = (build_kernel(self.context, source, self.name, self.options),
                      build_kernel(self.context, source, f"{self.name}_finish", self.options))
            self._built[ranged] = stages
        return stages

    def source(self, ranged: bool) -> str:
        out_t = dtype_to_ctype(self.dtype_out)
        params, prelude = declarators(self.args)
        if ranged:
            params += ["long first__", "long step__"]

        def at(position: str) -> str:  # the array index of loop position ``position``
            return f"(first__ + ({position}) * step__)" if ranged else position

        header = complex_preamble([self.dtype_out, *(a.dtype for a in self.args)])
        setup = "\n  ".join(prelude)
        return f"""{header}
{self.preamble}
#define NEUTRAL ({self.neutral})
#define REDUCE(a, b) ({self.reduce_expr})
#define READ_AND_MAP(i) ({self.map_expr})
__kernel void {self.name}({", ".join([*params, f"__global {out_t} *partials__",
                                      "long per_item__"])})
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
        arrays, queue = arrays_and_queue(self.args, args, queue, routine, fallback=out)
        values = array_args(self.args, args, routine)
        if slice is not None:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE", "slice needs an array argument")
            range = type(slice)(*slice.indices(arrays[0].size))
        if range is not None:
            first, step = range.start or 0, range.step or 1
            count = max(0, -(-(range.stop - first) // step))
        elif arrays:
            count = arrays[0].size
        else:
            raise make_error(routine, "INVALID_VALUE",
                             "without an array argument, give range=slice(...)")
        if out is None:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE",
                                 "without an array argument, give out= (a 0-d array)")
            out = type(arrays[0])(queue, (), self.dtype_out, allocator=allocator)
        elif out.dtype != self.dtype_out or out.size != 1:
            raise make_error(routine, "INVALID_VALUE",
                             f"out must hold one {self.dtype_out}, got {out.dtype} {out.shape}")
        event = self.run(queue, values, count, out.base_data,
                         out.offset // self.dtype_out.itemsize,
                         range is not None and (first, step) or None, wait_for)
        out.add_event(event)
        return (out, event) if return_event else out

    def run(self, queue: cl.CommandQueue, values: list[Any], count: int, out_buffer: Any,
            out_offset: int, ranged: tuple[int, int] | None,
            wait_for: Sequence[cl.Event] | None) -> cl.Event:
        """Enqueue both stages on prepared argument values, writing into ``out_buffer``."""
        stage, finish = self.kernels(ranged is not None)
        if ranged is not None:
            values = [*values, np.int64(ranged[0]), np.int64(ranged[1])]
        groups, per_item = reduction_geometry(queue.device, count)
        items = groups * GROUP
        partials = cl.Buffer(self.context, cl.mem_flags.READ_WRITE,
                             builtins.max(items, 1) * self.dtype_out.itemsize)
        if per_item:
            stage(queue, (items,), (GROUP,), *values, partials, np.int64(per_item),
                  wait_for=wait_for)
            wait_for = None
        else:
            items = 0
        return finish(queue, (1,), (1,), *values, partials, np.int64(items),
                      np.int64(items * per_item), np.int64(count), out_buffer,
                      np.int64(out_offset), wait_for=wait_for)


def reduction_geometry(device: cl.Device, n: int) -> tuple[int, int]:
    """(groups, indices per work-item) of the first stage: a few groups of ``GROUP`` per
    compute unit, each work-item stepping by ``GROUP`` so a group reads contiguous vectors; the
    ``n - groups * GROUP * per_item`` indices left over go to the second stage."""
    groups = max(1, 4 * device.max_compute_units)
    per_item = n // (groups * GROUP)
    if per_item == 0:
        groups = n // GROUP
        per_item = 1 if groups else 0
    return max(groups, 1), per_item


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
