"""``pyopencl.scan``: prefix sums with any associative operator.

``GenericScanKernel(ctx, dtype, arguments, input_expr, scan_expr, neutral, output_statement,
is_segment_start_expr=None, input_fetch_exprs=[])`` as in PyOpenCL: ``input_expr`` gives the
item at index ``i``, ``scan_expr`` combines ``a`` and ``b``, and ``output_statement`` runs at
every ``i`` with ``item`` (the inclusive result), ``prev_item`` (the exclusive one) and
``last_item`` (the whole scan's total) in scope. Segmented scans restart at every ``i`` where
``is_segment_start_expr`` holds.

Three kernels, laid out like the reductions: each work-item scans a contiguous chunk to its
total (and whether a segment starts in it), one work-item scans the totals into each chunk's
carry, then each work-item scans its chunk again from its carry and runs the output statement.
The same kernels run on a GPU, with more and shorter chunks (``chunk_geometry``): correct, not
tuned for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.elementwise import (
    array_args,
    arrays_and_queue,
    build_kernel,
    declarators,
    is_gpu,
    record_event,
    wait_list,
)
from ppcl.runtime.errors import make_error
from ppcl.tools import Argument, VectorArg, complex_preamble, dtype_to_ctype, parse_arg_list

_CHUNK_ALIGN = 16
_MIN_CHUNK = 4096


def chunk_geometry(device: cl.Device, n: int) -> tuple[int, int]:
    """(work-items, chunk) when each work-item runs a contiguous chunk of ``n`` indices in
    sequence (scans): on a CPU a few per core; on a GPU, whose threads are many and slow
    alone, about sqrt(n) items of about sqrt(n) indices, so that neither the chunks nor the
    one-item scan of their totals is long. Chunks are a multiple of 16 so they start aligned."""
    if is_gpu(device):
        items = max(1, math.isqrt(n))
    else:
        units = max(1, device.max_compute_units)
        items = max(1, min(-(-n // _MIN_CHUNK), 4 * units))
    chunk = -(-n // items)
    chunk = max(_CHUNK_ALIGN, -(-chunk // _CHUNK_ALIGN) * _CHUNK_ALIGN)
    return max(1, -(-n // chunk)), chunk


class GenericScanKernel:
    """``pyopencl.scan.GenericScanKernel``; call it with the arguments (``size=`` overrides the
    length, the size of the first array argument by default)."""

    def __init__(self, ctx: cl.Context, dtype: Any, arguments: str | list[Argument],
                 input_expr: str, scan_expr: str, neutral: str | None,
                 output_statement: str, is_segment_start_expr: str | None = None,
                 input_fetch_exprs: Sequence[tuple[str, str, int]] = (),
                 index_dtype: Any = np.int32, name_prefix: str = "scan", options: Any = None,
                 preamble: str = "", devices: Any = None, **kwargs: Any) -> None:
        if neutral is None and ("prev_item" in output_statement
                                or is_segment_start_expr is not None):
            # an exclusive result (and a segment's restart) begins at the neutral element;
            # an inclusive scan starts from its first item (PyOpenCL allows it without)
            raise make_error("GenericScanKernel", "INVALID_VALUE",
                             "give the neutral element of scan_expr (neutral=...): the output "
                             "uses prev_item or the scan is segmented")
        self.context = ctx
        self.dtype = np.dtype(dtype)
        self.args = parse_arg_list(arguments)
        self.input_expr = input_expr
        self.scan_expr = scan_expr
        self.neutral = neutral
        self.output_statement = output_statement
        self.is_segment_start_expr = is_segment_start_expr
        self.input_fetch_exprs = list(input_fetch_exprs)
        self.name = name_prefix
        self.options = options
        self.preamble = preamble
        self._built: list[cl.Kernel] = []  # the three stages, built at the first call

    def kernels(self) -> list[cl.Kernel]:
        """The three stages, built once per kernel object: no source text per launch."""
        if not self._built:
            source = self.source()
            self._built = [build_kernel(self.context, source, f"{self.name}_{part}",
                                        self.options)
                           for part in ("totals", "carries", "final")]
        return self._built

    def _fetches(self) -> str:
        """The ``input_fetch_exprs`` as locals read at ``i`` (zero past either end)."""
        lines = []
        for name, arg_name, offset in self.input_fetch_exprs:
            arg = next((a for a in self.args if a.name == arg_name), None)
            if not isinstance(arg, VectorArg):
                raise make_error("GenericScanKernel", "INVALID_VALUE",
                                 f"input_fetch_exprs names '{arg_name}', not an array argument")
            ctype = dtype_to_ctype(arg.dtype)
            lines.append(f"{ctype} {name} = (i + {offset} >= 0 && i + {offset} < N) ? "
                         f"{arg_name}[i + {offset}] : ({ctype})0;")
        return " ".join(lines)

    def source(self) -> str:
        t = dtype_to_ctype(self.dtype)
        params, prelude = declarators(self.args)
        common = [*params, "long N", "long chunk__"]
        start = "\n  ".join([*prelude, "long start__ = (long)get_global_id(0) * chunk__;",
                             "long stop__ = min(start__ + chunk__, N);"])
        segmented = self.is_segment_start_expr is not None
        if self.neutral is None:
            # no neutral element: ``have__`` says whether ``acc__`` holds a value yet; a chunk's
            # flags say it had items (2) and, after the carries, whether its carry is one (4)
            init = f"{t} acc__; char have__ = 0;"
            combine = "if (have__) acc__ = SCAN_EXPR(acc__, item_in__, false); " \
                      "else { acc__ = item_in__; have__ = 1; }"
            carry = ("if (f & 2) { acc__ = have__ ? SCAN_EXPR(acc__, totals__[g], false) "
                     ": totals__[g]; have__ = 1; }")
            seen, keep_have = "| (have__ << 1)", "flags__[g] = f | (have__ << 2);"
            final_init = f"{t} acc__ = carries__[get_global_id(0)]; " \
                         "char have__ = (flags__[get_global_id(0)] >> 2) & 1;"
        else:
            init = f"{t} acc__ = {self.neutral};"
            combine = "acc__ = SCAN_EXPR(acc__, item_in__, false);"
            carry = "acc__ = (f & 1) ? totals__[g] : SCAN_EXPR(acc__, totals__[g], false);"
            seen = keep_have = ""
            final_init = f"{t} acc__ = carries__[get_global_id(0)];"
        step = ("if (IS_SEG_START(i, item_in__)) { acc__ = item_in__; seg__ = 1; }\n"
                f"      else {combine}") if segmented else combine
        fetch = self._fetches()
        header = complex_preamble([self.dtype, *(a.dtype for a in self.args)])
        seg_macro = f"#define IS_SEG_START(i, a) ({self.is_segment_start_expr})\n" \
            if segmented else ""
        return f"""{header}
{self.preamble}
#define SCAN_EXPR(a, b, across_seg_boundary) ({self.scan_expr})
#define INPUT_EXPR(i) ({self.input_expr})
{seg_macro}
__kernel void {self.name}_totals({", ".join(common)}, __global {t} *totals__,
                                 __global char *flags__)
{{
  {start}
  {init}
  char seg__ = 0;
  for (long i = start__; i < stop__; i++) {{
    {fetch}
    {t} item_in__ = INPUT_EXPR(i);
    {step}
  }}
  totals__[get_global_id(0)] = acc__;
  flags__[get_global_id(0)] = seg__ {seen};
}}

__kernel void {self.name}_carries(__global const {t} *totals__,
                                  __global char *flags__, __global {t} *carries__,
                                  long groups__)
{{
  {init}
  for (long g = 0; g < groups__; g++) {{
    carries__[g] = acc__;
    char f = flags__[g];
    {keep_have}
    {carry}
  }}
  carries__[groups__] = acc__;
}}

__kernel void {self.name}_final({", ".join(common)}, __global const {t} *carries__,
                                __global const char *flags__, long groups__)
{{
  {start}
  {final_init}
  const {t} last_item = carries__[groups__];
  for (long i = start__; i < stop__; i++) {{
    {fetch}
    {t} item_in__ = INPUT_EXPR(i);
    {t} prev_item = acc__;
    {"if (IS_SEG_START(i, item_in__)) { prev_item = " + str(self.neutral) + "; acc__ = item_in__; } "
     "else " if segmented else ""}{combine}
    {t} item = acc__;
    {self.output_statement};
  }}
}}
"""

    def _geometry(self, device: cl.Device, n: int) -> tuple[int, int]:
        """(work-items, chunk) of a call over ``n`` indices."""
        return chunk_geometry(device, n)

    def __call__(self, *args: Any, allocator: Any = None, queue: cl.CommandQueue | None = None,
                 size: int | None = None, wait_for: Sequence[cl.Event] | None = None,
                 **kwargs: Any) -> cl.Event:
        routine = "GenericScanKernel"
        values = array_args(self.args, args, routine)  # first: it names a wrong argument
        arrays, queue = arrays_and_queue(self.args, args, queue, routine)
        if size is None:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE", "without arrays, give size=")
            size = arrays[0].size
        kernels = self.kernels()
        global_size, chunk = self._geometry(queue.device, size)
        item = self.dtype.itemsize
        totals = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, global_size * item)
        flags = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, global_size)
        carries = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, (global_size + 1) * item)
        common = [*values, np.int64(size), np.int64(chunk)]
        # a CPU runs one-item groups as they are; a GPU would give each its own block
        local = None if is_gpu(queue.device) else (1,)
        # each stage waits for the one before: an out-of-order queue orders nothing itself
        event = kernels[0](queue, (global_size,), local, *common, totals, flags,
                           wait_for=wait_list(arrays, wait_for))
        event = kernels[1](queue, (1,), (1,), totals, flags, carries, np.int64(global_size),
                           wait_for=[event])
        return record_event(kernels[2](queue, (global_size,), local, *common, carries, flags,
                                    np.int64(global_size), wait_for=[event]), arrays)


class GenericDebugScanKernel(GenericScanKernel):
    """``pyopencl.scan.GenericDebugScanKernel``: the same interface, run as one work-item
    scanning every index in order, a reference to check a ``GenericScanKernel`` against."""

    def _geometry(self, device: cl.Device, n: int) -> tuple[int, int]:
        return 1, max(1, n)


class _ScanKernel(GenericScanKernel):
    _output = ""

    def __init__(self, ctx: cl.Context, dtype: Any, scan_expr: str, neutral: str | None = None,
                 name_prefix: str = "scan", options: Any = None, preamble: str = "",
                 devices: Any = None) -> None:
        ctype = dtype_to_ctype(dtype)
        super().__init__(ctx, dtype, f"__global {ctype} *input_ary, __global {ctype} *output_ary",
                         "input_ary[i]", scan_expr, neutral, self._output,
                         name_prefix=name_prefix, options=options, preamble=preamble)

    def __call__(self, input_ary: Any, output_ary: Any = None, allocator: Any = None,  # type: ignore[override]
                 queue: cl.CommandQueue | None = None,
                 wait_for: Sequence[cl.Event] | None = None) -> Any:
        # no **kwargs: a keyword PyOpenCL does not take (output=) is a TypeError, not ignored
        if output_ary is None:
            output_ary = input_ary
        elif isinstance(output_ary, str) and output_ary == "new":
            output_ary = type(input_ary)(queue or input_ary.queue, input_ary.shape,
                                         input_ary.dtype,
                                         allocator=allocator or input_ary.allocator)
        size = getattr(input_ary, "size", None)
        if getattr(output_ary, "size", size) != size:
            # the scan writes input_ary.size elements: a shorter output would be overrun
            raise make_error("GenericScanKernel", "INVALID_VALUE",
                             f"output_ary has {output_ary.size} elements, input_ary {size}")
        super().__call__(input_ary, output_ary, queue=queue, size=size, wait_for=wait_for)
        return output_ary


class InclusiveScanKernel(_ScanKernel):
    """``output_ary[i] = input_ary[0] (+) ... (+) input_ary[i]`` (in place by default)."""
    _output = "output_ary[i] = item"


class ExclusiveScanKernel(_ScanKernel):
    """``output_ary[i] = neutral (+) input_ary[0] (+) ... (+) input_ary[i - 1]``."""
    _output = "output_ary[i] = prev_item"


__all__ = ["ExclusiveScanKernel", "GenericDebugScanKernel", "GenericScanKernel",
           "InclusiveScanKernel"]
