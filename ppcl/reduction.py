"""``pyopencl.reduction``: ``ReductionKernel(ctx, dtype_out, neutral, reduce_expr, map_expr,
arguments)`` folds ``map_expr`` (over index ``i``) with the associative ``reduce_expr`` (over
``a`` and ``b``).

Two stages, as in PyOpenCL, laid out for the device: on a CPU the first stage runs a few groups
of one work-item per core, each folding a contiguous chunk into eight independent accumulators
(so the compiler keeps eight lanes in flight and vectorizes where it can), and writes one
partial per group; the second stage, one work-item, folds the partials into the result. On a
GPU the first stage strides work-items over the range instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.elementwise import (
    array_args,
    build_kernel,
    declarators,
    is_gpu,
    loop_geometry,
)
from ppcl.runtime.errors import make_error
from ppcl.tools import Argument, VectorArg, complex_preamble, dtype_to_ctype, parse_arg_list

_LANES = 8


def _fold_tree(names: list[str]) -> list[str]:
    """Statements folding ``names`` pairwise into the first one."""
    statements: list[str] = []
    while len(names) > 1:
        half = len(names) // 2
        for k in range(half):
            statements.append(f"{names[k]} = REDUCE({names[k]}, {names[k + half]});")
        names = names[:half] + names[2 * half:]
    return statements


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

    def source(self, device: cl.Device, ranged: bool) -> str:
        out_t = dtype_to_ctype(self.dtype_out)
        params, prelude = declarators(self.args)
        params += [f"__global {out_t} *partials__", "long n__", "long chunk__"]

        def at(position: str) -> str:  # the array index of loop position ``position``
            return f"(first__ + {position} * step__)" if ranged else position

        if ranged:
            params += ["long first__", "long step__"]
        index = at("i__")
        lanes = [f"acc{k}__" for k in range(_LANES)]
        lines = [*prelude]
        if is_gpu(device):
            lines += [f"{out_t} acc0__ = NEUTRAL;",
                      "for (long i__ = get_global_id(0); i__ < n__; i__ += get_global_size(0))",
                      f"  acc0__ = REDUCE(acc0__, READ_AND_MAP({index}));"]
        else:
            lines += ["long start__ = (long)get_global_id(0) * chunk__;",
                      "long stop__ = min(start__ + chunk__, n__);",
                      *(f"{out_t} {lane} = NEUTRAL;" for lane in lanes),
                      "long i__ = start__;",
                      f"for (; i__ + {_LANES} <= stop__; i__ += {_LANES}) {{",
                      *(f"  {lane} = REDUCE({lane}, READ_AND_MAP({at(f'(i__ + {k})')}));"
                        for k, lane in enumerate(lanes)),
                      "}",
                      "for (; i__ < stop__; i__++)",
                      f"  acc0__ = REDUCE(acc0__, READ_AND_MAP({index}));",
                      *_fold_tree(lanes)]
        lines.append("partials__[get_global_id(0)] = acc0__;")
        header = complex_preamble([self.dtype_out, *(a.dtype for a in self.args)])
        body = "\n  ".join(lines)
        return (f"{header}\n{self.preamble}\n"
                f"#define NEUTRAL ({self.neutral})\n"
                f"#define REDUCE(a, b) ({self.reduce_expr})\n"
                f"#define READ_AND_MAP(i) ({self.map_expr})\n"
                f"__kernel void {self.name}({', '.join(params)})\n{{\n  {body}\n}}\n\n"
                f"__kernel void {self.name}_finish(__global const {out_t} *partials__, "
                f"long n__, __global {out_t} *out__base, long out__offset)\n{{\n"
                f"  {out_t} acc0__ = NEUTRAL;\n"
                "  for (long i__ = 0; i__ < n__; i__++)\n"
                "    acc0__ = REDUCE(acc0__, partials__[i__]);\n"
                "  out__base[out__offset] = acc0__;\n}\n")

    def __call__(self, *args: Any, queue: cl.CommandQueue | None = None,
                 wait_for: Sequence[cl.Event] | None = None, return_event: bool = False,
                 range: slice | None = None, slice: slice | None = None,  # noqa: A002
                 out: Any = None, allocator: Any = None) -> Any:
        routine = "ReductionKernel"
        arrays = [v for a, v in zip(self.args, args) if isinstance(a, VectorArg)
                  and hasattr(v, "base_data")]
        if queue is None:
            queue = next((v.queue for v in arrays if v.queue is not None), None)
            if queue is None and out is not None:
                queue = out.queue
        if queue is None:
            raise make_error(routine, "INVALID_COMMAND_QUEUE",
                             "no queue given and no array argument carries one")
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
        device = queue.device
        source = self.source(device, ranged is not None)
        stage = build_kernel(self.context, source, self.name, self.options)
        finish = build_kernel(self.context, source, f"{self.name}_finish", self.options)
        global_size, local_size, chunk = loop_geometry(device, count)
        partials = cl.Buffer(self.context, cl.mem_flags.READ_WRITE,
                             global_size * self.dtype_out.itemsize)
        values = [*values, partials, np.int64(count), np.int64(chunk)]
        if ranged is not None:
            values += [np.int64(ranged[0]), np.int64(ranged[1])]
        stage(queue, (global_size,), (local_size,), *values, wait_for=wait_for)
        groups = global_size if count else 0
        return finish(queue, (1,), (1,), partials, np.int64(groups), out_buffer,
                      np.int64(out_offset))


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
