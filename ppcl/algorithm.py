"""``pyopencl.algorithm`` on ppcl: stream compaction (``copy_if``, ``remove_if``,
``partition``, ``unique``) as one scan each.

Each operation counts the items it keeps with an exclusive sum (``GenericScanKernel``) and
writes every kept item at its count, so the kept items stay in their order. Like PyOpenCL's,
each returns its results with the number kept as a 0-d device array of PyOpenCL's
``scan_dtype`` (uint32) and the event of the scan. The scan kernels are built once per context, predicate, dtype and extra arguments.

``RadixSort`` is a least-significant-digit radix sort, ``bits_at_a_time`` bits a pass: one
scan per pass counts, in a vector of ``2**bits`` counters, the items of each digit value
before each item, and its output statement writes every item at (items of smaller digits) +
(items of its digit before it), which keeps equal digits in order, so the passes sort
stably. ``KeyValueSorter`` groups values by key with it. ``ListOfListsBuilder`` is not
provided.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.array import Array, _cached, empty_like, zeros
from ppcl.elementwise import ElementwiseKernel
from ppcl.reduction import neutral_of
from ppcl.runtime.errors import make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.runtime.unsupported import unsupported
from ppcl.scan import GenericScanKernel
from ppcl.tools import ScalarArg, VectorArg, dtype_to_ctype, parse_arg_list

ExtraArgs = Sequence[tuple[str, Any]]


def _count_dtype(ary: Array) -> np.dtype:
    """The dtype of the count, PyOpenCL's ``scan_dtype``: uint32, or uint64 for arrays of
    more than 2**32 - 1 items."""
    return np.dtype(np.uint64 if ary.size > np.iinfo(np.uint32).max else np.uint32)


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
    count = _count_dtype(ary)
    outs = "".join(f", __global {t} *out{n}__" for n in range(outputs))
    arguments = f"__global {t} *ary{outs}, __global {dtype_to_ctype(count)} *count__" \
        f"{_extra_declarations(extra_args)}"
    key = (kind, ary.dtype.str, input_expr, arguments, preamble)
    return _cached(ary.context, key, lambda: GenericScanKernel(
        ary.context, count, arguments, input_expr, "a+b", "0", output_statement,
        preamble=preamble, name_prefix=f"ppcl_{kind}"))


def _run(routine: str, ary: Array, scan: Any, outputs: list[Array], extra_args: ExtraArgs,
         queue: cl.CommandQueue | None,
         wait_for: Sequence[cl.Event] | None) -> tuple[Array, cl.Event]:
    if not isinstance(ary, Array) or ary.ndim != 1:
        raise make_error(routine, "INVALID_VALUE", f"{routine} takes a 1-d ppcl.array.Array")
    queue = ary._queue(queue, routine)
    count = zeros(queue, (), _count_dtype(ary))
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


def _radix_preamble(bits: int, index_dtype: np.dtype, key_dtype: np.dtype) -> str:
    """The digit of a key and the helpers over a vector of ``2**bits`` counters (one per digit
    value): the counters of one digit, one digit's counter, and the sum of those below it."""
    counters = dtype_to_ctype(cltypes.vec_types[index_dtype, 1 << bits])
    index_t = dtype_to_ctype(index_dtype)
    digits = range(1 << bits)
    one = ", ".join(f"({index_t})(digit == {d})" for d in digits)
    count = " + ".join(f"(digit == {d} ? c.s{d:X} : 0)" for d in digits)
    below = " + ".join(f"(digit > {d} ? c.s{d:X} : 0)" for d in digits)
    return f"""
#define PPCL_RADIX_DIGIT(key, base_bit) \\
  ((int)(((({dtype_to_ctype(key_dtype)})(key)) >> (base_bit)) & {(1 << bits) - 1}))
inline {counters} ppcl_radix_one(int digit) {{ return ({counters})({one}); }}
inline {index_t} ppcl_radix_count({counters} c, int digit) {{ return {count}; }}
inline {index_t} ppcl_radix_below({counters} c, int digit) {{ return {below}; }}
"""


class RadixSort:
    """``pyopencl.algorithm.RadixSort(context, arguments, key_expr, sort_arg_names,
    bits_at_a_time=2, index_dtype=np.int32, key_dtype=np.uint32)``: sorts the arrays named
    in ``sort_arg_names`` stably by ``key_expr`` (C code of the arguments and ``i``, taken as
    ``key_dtype``). Calling it with the arguments (and ``key_bits=``, the low bits of the key
    that count) returns ``(sorted copies in the order of sort_arg_names, event)``."""

    def __init__(self, context: cl.Context, arguments: Any, key_expr: str,
                 sort_arg_names: Sequence[str], bits_at_a_time: int = 2,
                 index_dtype: Any = np.int32, key_dtype: Any = np.uint32,
                 scan_kernel: Any = GenericScanKernel, options: Any = None) -> None:
        routine = "RadixSort"
        self.context = context
        self.arguments = parse_arg_list(arguments)
        arrays = {a.name: a for a in self.arguments if isinstance(a, VectorArg)}
        missing = [name for name in sort_arg_names if name not in arrays]
        if missing or not sort_arg_names:
            raise make_error(routine, "INVALID_VALUE", "sort_arg_names must name array "
                             f"arguments; not arrays among them: {missing}")
        self.sort_arg_names = list(sort_arg_names)
        self.bits = int(bits_at_a_time)
        if not 1 <= self.bits <= 4:  # 2**bits counters make one OpenCL vector: 16 at most
            raise make_error(routine, "INVALID_VALUE",
                             f"bits_at_a_time must be 1 to 4, got {bits_at_a_time}")
        self.index_dtype = np.dtype(index_dtype)
        self.key_dtype = np.dtype(key_dtype)
        if self.index_dtype.kind not in "iu" or self.key_dtype.kind not in "iu":
            raise make_error(routine, "INVALID_VALUE", "index_dtype and key_dtype must be "
                             f"integers, got {self.index_dtype} and {self.key_dtype}")
        self.first_array = next(n for n, a in enumerate(self.arguments) if a.name in arrays)
        digit = f"PPCL_RADIX_DIGIT({key_expr}, ppcl_base_bit)"
        writes = " ".join(f"sorted_{name}[ppcl_to] = {name}[i];" for name in sort_arg_names)
        self.scan_kernel = scan_kernel(
            context, cltypes.vec_types[self.index_dtype, 1 << self.bits],
            [*self.arguments, *(VectorArg(arrays[name].dtype, f"sorted_{name}")
                                for name in sort_arg_names),
             ScalarArg(np.int32, "ppcl_base_bit")],
            input_expr=f"ppcl_radix_one({digit})", scan_expr="a + b", neutral="0",
            output_statement=f"int ppcl_digit = {digit}; "
            f"{dtype_to_ctype(self.index_dtype)} ppcl_to = ppcl_radix_below(last_item, "
            f"ppcl_digit) + ppcl_radix_count(prev_item, ppcl_digit); {writes}",
            preamble=_radix_preamble(self.bits, self.index_dtype, self.key_dtype),
            name_prefix="ppcl_radix_sort", options=options)

    def __call__(self, *args: Any, queue: cl.CommandQueue | None = None,
                 allocator: Any = None, key_bits: int | None = None,
                 wait_for: Sequence[cl.Event] | None = None
                 ) -> tuple[tuple[Array, ...], cl.Event]:
        routine = "RadixSort"
        if len(args) != len(self.arguments):
            raise TypeError(f"RadixSort takes {len(self.arguments)} arguments, got {len(args)}")
        width = self.key_dtype.itemsize * 8
        key_bits = width if key_bits is None else int(key_bits)
        if not 0 <= key_bits <= width:
            raise make_error(routine, "INVALID_VALUE",
                             f"key_bits must be 0 to {width} ({self.key_dtype}), got {key_bits}")
        first = args[self.first_array]
        if not isinstance(first, Array):
            raise make_error(routine, "INVALID_ARG_VALUE",
                             f"'{self.arguments[self.first_array].name}' is not a ppcl array")
        queue = first._queue(queue, routine)
        current = dict(zip([a.name for a in self.arguments], args, strict=True))
        event = enqueue_no_work(queue, wait_for)
        # each pass reads what the one before wrote: two sets of arrays serve every pass
        targets: list[list[Array]] = []
        for base_bit in range(0, key_bits, self.bits):
            if len(targets) < 2:
                targets.append([Array(queue, first.size, current[name].dtype,
                                      allocator=allocator or first.allocator)
                                for name in self.sort_arg_names])
            written = targets[(base_bit // self.bits) % 2]
            event = self.scan_kernel(*current.values(), *written, np.int32(base_bit),
                                     queue=queue, size=first.size, wait_for=[event])
            current.update(zip(self.sort_arg_names, written, strict=True))
        return tuple(current[name] for name in self.sort_arg_names), event


class KeyValueSorter:
    """``pyopencl.algorithm.KeyValueSorter(context)``: called with ``(queue, keys, values,
    nkeys, starts_dtype)``, returns ``(starts, lists, event)``: ``lists`` holds the values
    sorted stably by key (each key in ``[0, nkeys)``), and the values of key ``k`` are
    ``lists[starts[k]:starts[k + 1]]`` (``starts`` has ``nkeys + 1`` entries)."""

    def __init__(self, context: cl.Context) -> None:
        self.context = context

    def _kernels(self, key_dtype: np.dtype, value_dtype: np.dtype, starts_dtype: np.dtype
                 ) -> tuple[RadixSort, ElementwiseKernel, ElementwiseKernel, GenericScanKernel]:
        key_t, starts_t = dtype_to_ctype(key_dtype), dtype_to_ctype(starts_dtype)

        def make() -> tuple[RadixSort, ElementwiseKernel, ElementwiseKernel, GenericScanKernel]:
            sorter = RadixSort(self.context, [VectorArg(value_dtype, "values"),
                                              VectorArg(key_dtype, "keys")],
                               "keys[i]", ["values", "keys"], key_dtype=key_dtype)
            past_the_end = ElementwiseKernel(
                self.context, f"__global {starts_t} *starts, long count", "starts[i] = count",
                name="ppcl_fill_starts")
            # the first index of each key present (a key past nkeys writes nothing)
            first_of_key = ElementwiseKernel(
                self.context, f"__global {key_t} *keys, __global {starts_t} *starts, "
                f"long nkeys", "if (keys[i] < nkeys && (i == 0 || keys[i] != keys[i - 1])) "
                f"starts[keys[i]] = ({starts_t})i", name="ppcl_key_starts")
            # a key not present starts where the next present one does: a min-scan from
            # the end, in place (each index reads its own entry before writing it)
            backwards_min = GenericScanKernel(
                self.context, starts_dtype, f"__global {starts_t} *starts, long nkeys",
                "starts[nkeys - i]", "min(a, b)", neutral_of(starts_dtype, "min"),
                "starts[nkeys - i] = item", name_prefix="ppcl_key_starts_scan")
            return sorter, past_the_end, first_of_key, backwards_min
        return _cached(self.context, ("key_value_sorter", key_dtype.str, value_dtype.str,
                                      starts_dtype.str), make)

    def __call__(self, queue: cl.CommandQueue, keys: Array, values: Array, nkeys: int,
                 starts_dtype: Any, allocator: Any = None,
                 wait_for: Sequence[cl.Event] | None = None
                 ) -> tuple[Array, Array, cl.Event]:
        routine = "KeyValueSorter"
        if not isinstance(keys, Array) or not isinstance(values, Array) \
                or keys.shape != values.shape or keys.ndim != 1:
            raise make_error(routine, "INVALID_VALUE",
                             "keys and values must be 1-d ppcl arrays of one length")
        if keys.dtype.kind not in "iu" or int(nkeys) < 0:
            raise make_error(routine, "INVALID_VALUE", "keys must be integers in [0, nkeys)")
        starts_dtype = np.dtype(starts_dtype)
        sorter, past_the_end, first_of_key, backwards_min = self._kernels(
            keys.dtype, values.dtype, starts_dtype)
        (lists, sorted_keys), event = sorter(
            values, keys, queue=queue, allocator=allocator,
            key_bits=max(1, (int(nkeys) - 1).bit_length()), wait_for=wait_for)
        starts = Array(queue, int(nkeys) + 1, starts_dtype, allocator=allocator)
        event = past_the_end(starts, np.int64(keys.size), queue=queue, wait_for=[event])
        if keys.size:
            event = first_of_key(sorted_keys, starts, np.int64(nkeys), queue=queue,
                                 wait_for=[event])
        event = backwards_min(starts, np.int64(nkeys), queue=queue, wait_for=[event])
        return starts, lists, event


def __getattr__(name: str) -> Any:
    raise unsupported("ppcl.algorithm", name)


__all__ = ["KeyValueSorter", "RadixSort", "copy_if", "partition", "remove_if", "unique"]
