"""``pyopencl.algorithm`` on ppcl: stream compaction (``copy_if``, ``remove_if``,
``partition``, ``unique``) as one scan each.

Each operation counts the items it keeps with an exclusive sum (``GenericScanKernel``) and
writes every kept item at its count, so the kept items stay in their order. Like PyOpenCL's,
each returns its results with the number kept as a 0-d device array and the event of the
scan. The scan kernels are built once per context, predicate, dtype and extra arguments.
``RadixSort``, ``KeyValueSorter`` and ``ListOfListsBuilder`` are not provided.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.array import Array, _cached, empty_like, zeros
from ppcl.runtime.errors import make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.runtime.unsupported import unsupported
from ppcl.scan import GenericScanKernel
from ppcl.tools import dtype_to_ctype

ExtraArgs = Sequence[tuple[str, Any]]
_COUNT = np.dtype(np.int32)


def _extra_declarations(extra_args: ExtraArgs) -> str:
    """The kernel parameters for PyOpenCL's ``extra_args``: ``(name, value)`` pairs, a device
    array becoming a ``__global`` pointer and a scalar a value."""
    parts = []
    for name, value in extra_args:
        if isinstance(value, Array):
            parts.append(f", __global {dtype_to_ctype(value.dtype)} *{name}")
        else:
            parts.append(f", {dtype_to_ctype(np.asarray(value).dtype)} {name}")
    return "".join(parts)


def _scan(ary: Array, kind: str, input_expr: str, output_statement: str, outputs: int,
          extra_args: ExtraArgs, preamble: str) -> GenericScanKernel:
    t = dtype_to_ctype(ary.dtype)
    outs = "".join(f", __global {t} *out{n}__" for n in range(outputs))
    arguments = f"__global {t} *ary{outs}, __global int *count__" \
        f"{_extra_declarations(extra_args)}"
    key = (kind, ary.dtype.str, input_expr, arguments, preamble)
    return _cached(ary.context, key, lambda: GenericScanKernel(
        ary.context, _COUNT, arguments, input_expr, "a+b", "0", output_statement,
        preamble=preamble, name_prefix=f"ppcl_{kind}"))


def _run(routine: str, ary: Array, scan: Any, outputs: list[Array], extra_args: ExtraArgs,
         queue: cl.CommandQueue | None,
         wait_for: Sequence[cl.Event] | None) -> tuple[Array, cl.Event]:
    if not isinstance(ary, Array) or ary.ndim != 1:
        raise make_error(routine, "INVALID_VALUE", f"{routine} takes a 1-d ppcl.array.Array")
    queue = ary._queue(queue, routine)
    count = zeros(queue, (), _COUNT)
    if ary.size == 0:
        return count, enqueue_no_work(queue, wait_for)
    values = [value for _, value in extra_args]
    event = scan(ary, *outputs, count, *values, queue=queue, wait_for=wait_for)
    return count, event


def copy_if(ary: Array, predicate: str, extra_args: ExtraArgs = (), preamble: str = "",
            queue: cl.CommandQueue | None = None,
            wait_for: Sequence[cl.Event] | None = None) -> tuple[Array, Array, cl.Event]:
    """``(out, count, event)``: the items of ``ary`` for which ``predicate`` (C code using
    ``ary[i]``) holds, in order, in the first ``count`` items of ``out``."""
    scan = _scan(ary, "copy_if", f"({predicate}) ? 1 : 0",
                 "if (prev_item != item) out0__[item - 1] = ary[i]; "
                 "if (i + 1 == N) *count__ = item", 1, extra_args, preamble)
    out = empty_like(ary)
    count, event = _run("copy_if", ary, scan, [out], extra_args, queue, wait_for)
    return out, count, event


def remove_if(ary: Array, predicate: str, extra_args: ExtraArgs = (), preamble: str = "",
              queue: cl.CommandQueue | None = None,
              wait_for: Sequence[cl.Event] | None = None) -> tuple[Array, Array, cl.Event]:
    """``(out, count, event)``: the items for which ``predicate`` does not hold."""
    return copy_if(ary, f"!({predicate})", extra_args, preamble, queue, wait_for)


def partition(ary: Array, predicate: str, extra_args: ExtraArgs = (), preamble: str = "",
              queue: cl.CommandQueue | None = None, wait_for: Sequence[cl.Event] | None = None
              ) -> tuple[Array, Array, Array, cl.Event]:
    """``(out_true, out_false, count_true, event)``: the items for which ``predicate`` holds
    and the others, each in order (``out_false`` holds ``ary.size - count_true`` items)."""
    scan = _scan(ary, "partition", f"({predicate}) ? 1 : 0",
                 "if (prev_item != item) out0__[item - 1] = ary[i]; "
                 "else out1__[i - item] = ary[i]; "
                 "if (i + 1 == N) *count__ = item", 2, extra_args, preamble)
    out_true, out_false = empty_like(ary), empty_like(ary)
    count, event = _run("partition", ary, scan, [out_true, out_false], extra_args, queue,
                        wait_for)
    return out_true, out_false, count, event


def unique(ary: Array, is_equal_expr: str = "a == b", extra_args: ExtraArgs = (),
           preamble: str = "", queue: cl.CommandQueue | None = None,
           wait_for: Sequence[cl.Event] | None = None) -> tuple[Array, Array, cl.Event]:
    """``(out, count, event)``: ``ary`` without the items equal (``is_equal_expr`` of ``a``
    and ``b``) to the one before them."""
    macro = f"#define PPCL_IS_EQUAL(a, b) ({is_equal_expr})\n"
    scan = _scan(ary, "unique", "(i == 0 || !PPCL_IS_EQUAL(ary[i - 1], ary[i])) ? 1 : 0",
                 "if (prev_item != item) out0__[item - 1] = ary[i]; "
                 "if (i + 1 == N) *count__ = item", 1, extra_args, macro + preamble)
    out = empty_like(ary)
    count, event = _run("unique", ary, scan, [out], extra_args, queue, wait_for)
    return out, count, event


def __getattr__(name: str) -> Any:
    raise unsupported("ppcl.algorithm", name)


__all__ = ["copy_if", "partition", "remove_if", "unique"]
