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
stably. ``KeyValueSorter`` groups values by key with it.

``ListOfListsBuilder`` runs the user's ``generate`` function twice per object: a count pass
counts each list's entries per object, an exclusive scan turns the counts into starts, and a
write pass appends each entry at its object's start. With ``eliminate_empty_output_lists``,
a scan over "count is nonzero" first keeps the nonempty objects' counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.array import Array, _cached, empty_like, zeros
from ppcl.elementwise import ElementwiseKernel, array_args, record_event, wait_list
from ppcl.reduction import neutral_of
from ppcl.runtime.errors import integer_arg, make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.runtime.unsupported import unsupported
from ppcl.scan import GenericScanKernel
from ppcl.tools import (
    Argument,
    ScalarArg,
    VectorArg,
    complex_preamble,
    dtype_to_ctype,
    parse_arg_list,
)

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
        if keys.size:
            # the sort looks at the bits of nkeys - 1 only: a key outside [0, nkeys) would be
            # grouped under another key without a word (as PyOpenCL's is); one reduction each
            # way and a read refuse it instead
            if wait_for:
                cl.wait_for_events(list(wait_for))
            low, high = int(keys.min(queue).get()), int(keys.max(queue).get())
            if low < 0 or high >= int(nkeys):
                raise make_error(routine, "INVALID_VALUE",
                                 f"keys must lie in [0, nkeys) = [0, {int(nkeys)}); they range "
                                 f"over [{low}, {high}]")
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

@dataclass
class BuiltList:
    """One list a ``ListOfListsBuilder`` built: ``count`` entries in all, those of object
    ``k`` at ``lists[starts[k]:starts[k + 1]]``. For a list in
    ``eliminate_empty_output_lists``, ``starts`` has an entry per nonempty object (the
    ``num_nonempty_lists`` objects ``nonempty_indices`` names, in order) and one past the end,
    and ``compressed_indices[k]`` is the number of nonempty objects before object ``k``."""

    count: int | None
    starts: Array | None
    lists: Array | None = None
    num_nonempty_lists: int | None = None
    nonempty_indices: Array | None = None
    compressed_indices: Array | None = None


def _c_list(items: Sequence[str]) -> str:
    """``items`` as the text of C arguments with a trailing comma (empty when none), the
    form of PyOpenCL's ``LIST_ARG_DECL``/``USER_ARGS`` macros."""
    return "".join(f"{item}, " for item in items)


def _index_kernels(context: cl.Context, index_dtype: np.dtype
                   ) -> tuple[GenericScanKernel, GenericScanKernel]:
    """The scans of ``ListOfListsBuilder``: counts to starts (an exclusive sum with the total
    past the end), and the compaction of the nonempty objects' counts."""
    t = dtype_to_ctype(index_dtype)

    def make() -> tuple[GenericScanKernel, GenericScanKernel]:
        starts = GenericScanKernel(
            context, index_dtype, f"__global {t} *counts, __global {t} *starts", "counts[i]",
            "a+b", "0", "starts[i + 1] = item; if (i == 0) starts[0] = 0",
            name_prefix="ppcl_list_starts")
        compress = GenericScanKernel(
            context, index_dtype,
            f"__global {t} *counts, __global {t} *compressed_counts, "
            f"__global {t} *nonempty_indices, __global {t} *compressed_indices, "
            f"__global {t} *num_nonempty",
            "counts[i] != 0 ? 1 : 0", "a+b", "0",
            "compressed_indices[i + 1] = item; if (i == 0) compressed_indices[0] = 0; "
            "if (prev_item != item) { nonempty_indices[item - 1] = i; "
            "compressed_counts[item - 1] = counts[i]; } "
            "if (i + 1 == N) *num_nonempty = item", name_prefix="ppcl_list_compress")
        return starts, compress
    return _cached(context, ("list_of_lists_scans", index_dtype.str), make)


class ListOfListsBuilder:
    """``pyopencl.algorithm.ListOfListsBuilder``: ``generate_template`` defines
    ``void generate(LIST_ARG_DECL USER_ARG_DECL index_type i)``, which calls
    ``APPEND_<name>(value)`` for the entries of object ``i`` in the lists
    ``list_names_and_dtypes`` names. Calling the builder with ``(queue, n_objects, *args)``
    (the arguments of ``arg_decls``) returns ``({name: BuiltList}, event)``. A list in
    ``count_sharing`` (child to mother) is appended to right after its mother and shares her
    starts. ``debug``, ``complex_kernel`` and ``devices`` change no result and are taken."""

    def __init__(self, context: cl.Context, list_names_and_dtypes: Sequence[tuple[str, Any]],
                 generate_template: str, arg_decls: str | list[Argument],
                 count_sharing: Mapping[str, str] | None = None, devices: Any = None,
                 name_prefix: str = "plb", options: Any = None, preamble: str = "",
                 debug: bool = False, complex_kernel: bool = False,
                 eliminate_empty_output_lists: bool | Sequence[str] = False) -> None:
        routine = "ListOfListsBuilder"
        self.context = context
        self.lists = [(str(name), np.dtype(dtype)) for name, dtype in list_names_and_dtypes]
        names = [name for name, _ in self.lists]
        if not names or len(set(names)) != len(names) \
                or not all(name.isidentifier() for name in names):
            raise make_error(routine, "INVALID_VALUE", "list_names_and_dtypes must name one "
                             f"or more lists, each once, by C identifiers: got {names}")
        self.count_sharing = dict(count_sharing or {})
        for child, mother in self.count_sharing.items():
            if child not in names or mother not in names or mother in self.count_sharing:
                raise make_error(routine, "INVALID_VALUE", f"count_sharing maps '{child}' to "
                                 f"'{mother}': both must be lists, the second one counting "
                                 "its own entries")
        if isinstance(eliminate_empty_output_lists, bool):
            eliminate_empty_output_lists = names if eliminate_empty_output_lists else []
        unknown = set(eliminate_empty_output_lists) - set(names)
        if unknown:
            raise make_error(routine, "INVALID_VALUE",
                             f"eliminate_empty_output_lists names no list: {sorted(unknown)}")
        # a child list has its mother's starts, so it is compressed exactly when she is
        self.eliminated = {name for name in eliminate_empty_output_lists
                           if name not in self.count_sharing}
        for child in set(eliminate_empty_output_lists) & set(self.count_sharing):
            if self.count_sharing[child] not in self.eliminated:
                raise make_error(routine, "INVALID_VALUE", f"eliminate_empty_output_lists "
                                 f"names '{child}', which shares the starts of "
                                 f"'{self.count_sharing[child]}': name her too")
        self.generate_template = generate_template
        self.arg_decls = parse_arg_list(arg_decls)
        self.name_prefix = name_prefix
        self.options = options
        self.preamble = preamble
        self.debug = debug
        self.complex_kernel = complex_kernel
        self._stages: dict[tuple[str, frozenset[str]], tuple[ElementwiseKernel, ...]] = {}

    def _header(self, index_dtype: np.dtype, counting: bool, omitted: frozenset[str]) -> str:
        """The preamble of one pass: ``index_type``, the ``APPEND_`` macros of the pass, the
        argument macros and the user's ``generate``. The count pass counts each list's
        entries in a private counter; the write pass stores each at a private index from
        the list's starts. An omitted list stores nothing (its index still counts, for the
        lists that share it)."""
        list_decls: list[str] = []
        lines = [complex_preamble([*(dtype for _, dtype in self.lists),
                                   *(arg.dtype for arg in self.arg_decls)]),
                 self.preamble, f"typedef {dtype_to_ctype(index_dtype)} index_type;",
                 f"#define PLB_{'COUNT' if counting else 'WRITE'}_STAGE"]
        for name, dtype in self.lists:
            mother = self.count_sharing.get(name)
            if counting:
                if mother is None:
                    list_decls.append(f"index_type *plb_loc_{name}_count")
                append = "" if mother is not None else f"++(*plb_loc_{name}_count);"
            else:
                list_decls.append(f"__global {dtype_to_ctype(dtype)} *plb_{name}_list")
                if mother is None:
                    list_decls.append(f"index_type *plb_{name}_index")
                if mother is not None:
                    append = "" if name in omitted else \
                        f"plb_{name}_list[*plb_{mother}_index - 1] = (value);"
                elif name in omitted:
                    append = f"++(*plb_{name}_index);"
                else:
                    append = f"plb_{name}_list[(*plb_{name}_index)++] = (value);"
            lines.append(f"#define APPEND_{name}(value) {{ {append} }}")
        lines += [f"#define LIST_ARG_DECL {_c_list(list_decls)}",
                  f"#define LIST_ARGS {_c_list([d.rpartition('*')[2] for d in list_decls])}",
                  f"#define USER_ARG_DECL {_c_list([a.declarator() for a in self.arg_decls])}",
                  f"#define USER_ARGS {_c_list([a.name for a in self.arg_decls])}",
                  self.generate_template]
        return "\n".join(lines)

    def _count_kernel(self, index_dtype: np.dtype, omitted: frozenset[str]) -> ElementwiseKernel:
        owners = [name for name, _ in self.lists if name not in self.count_sharing]
        setup = " ".join(f"index_type plb_loc_{name}_count = 0;" for name in owners)
        call = _c_list([f"&plb_loc_{name}_count" for name in owners])
        store = " ".join(f"plb_{name}_count[i] = plb_loc_{name}_count;"
                         for name in owners if name not in omitted)
        args = [VectorArg(index_dtype, f"plb_{name}_count")
                for name in owners if name not in omitted]
        return ElementwiseKernel(self.context, [*args, *self.arg_decls],
                                 f"{setup} generate({call}USER_ARGS (index_type)i); {store}",
                                 name=f"{self.name_prefix}_count", options=self.options,
                                 preamble=self._header(index_dtype, True, omitted))

    def _write_kernel(self, index_dtype: np.dtype, omitted: frozenset[str]) -> ElementwiseKernel:
        args: list[Argument] = []
        setup, call = [], []
        for name, dtype in self.lists:
            owner = name not in self.count_sharing
            if name in omitted:
                setup.append(f"__global {dtype_to_ctype(dtype)} *plb_{name}_list = 0;")
                start = "0"
            else:
                args.append(VectorArg(dtype, f"plb_{name}_list"))
                if owner:
                    args.append(VectorArg(index_dtype, f"plb_{name}_start_index"))
                start = f"plb_{name}_start_index[i]"
                if owner and name in self.eliminated:
                    args.append(VectorArg(index_dtype, f"plb_{name}_compressed_indices"))
                    start = f"plb_{name}_start_index[plb_{name}_compressed_indices[i]]"
            call.append(f"plb_{name}_list")
            if owner:
                setup.append(f"index_type plb_{name}_index = {start};")
                call.append(f"&plb_{name}_index")
        return ElementwiseKernel(self.context, [*args, *self.arg_decls],
                                 f"{' '.join(setup)} generate({_c_list(call)}USER_ARGS "
                                 "(index_type)i);",
                                 name=f"{self.name_prefix}_write", options=self.options,
                                 preamble=self._header(index_dtype, False, omitted))

    def _kernels(self, index_dtype: np.dtype, omitted: frozenset[str]
                 ) -> tuple[ElementwiseKernel, ...]:
        key = (index_dtype.str, omitted)
        found = self._stages.get(key)
        if found is None:
            found = self._stages[key] = (self._count_kernel(index_dtype, omitted),
                                         self._write_kernel(index_dtype, omitted))
        return found

    def _launch(self, kernel: ElementwiseKernel, queue: cl.CommandQueue, n_objects: int,
                args: Sequence[Any], wait_for: Sequence[cl.Event] | None) -> cl.Event:
        values = array_args(kernel.args, args, "ListOfListsBuilder")
        arrays = [arg for arg in args if isinstance(arg, Array)]
        return record_event(kernel.launch(queue, values, n_objects, None,
                                          wait_list(arrays, wait_for)), arrays)

    def __call__(self, queue: cl.CommandQueue, n_objects: int, *args: Any,
                 omit_lists: Sequence[str] | None = None,
                 wait_for: Sequence[cl.Event] | None = None,
                 allocator: Any = None) -> tuple[dict[str, BuiltList], cl.Event]:
        routine = "ListOfListsBuilder"
        n = integer_arg(routine, n_objects, "number of objects")
        if n < 0:
            raise make_error(routine, "INVALID_VALUE", f"n_objects is {n}")
        if len(args) != len(self.arg_decls):
            raise TypeError(f"ListOfListsBuilder takes {len(self.arg_decls)} arguments "
                            f"(arg_decls), got {len(args)}")
        omitted = frozenset(omit_lists or ())
        names = [name for name, _ in self.lists]
        unknown = omitted - set(names)
        if unknown:
            raise make_error(routine, "INVALID_VALUE",
                             f"omit_lists names no list: {sorted(unknown)}")
        for child, mother in self.count_sharing.items():
            if mother in omitted and child not in omitted:
                raise make_error(routine, "INVALID_VALUE", f"omit_lists omits '{mother}', "
                                 f"whose count '{child}' shares: omit both or neither")
        index_dtype = np.dtype(np.int64 if n >= np.iinfo(np.int32).max else np.int32)
        count_kernel, write_kernel = self._kernels(index_dtype, omitted)
        starts_scan, compress_scan = _index_kernels(self.context, index_dtype)

        def new(size: int, dtype: np.dtype) -> Array:
            return Array(queue, size, dtype, allocator=allocator)

        owners = [name for name in names if name not in self.count_sharing and name not in omitted]
        counts = [new(n, index_dtype) for _ in owners]
        event = self._launch(count_kernel, queue, n, [*counts, *args], wait_for)
        result: dict[str, BuiltList] = {}
        for name, sizes in zip(owners, counts, strict=True):
            built = result[name] = BuiltList(count=None, starts=None)
            size = n
            if name in self.eliminated:
                built.compressed_indices = zeros(queue, n + 1, index_dtype, allocator=allocator)
                nonempty, compressed = new(n, index_dtype), new(n, index_dtype)
                total = zeros(queue, (), index_dtype, allocator=allocator)
                if n:
                    compress_scan(sizes, compressed, nonempty, built.compressed_indices, total,
                                  queue=queue, size=n)
                size = built.num_nonempty_lists = int(total.get())
                built.nonempty_indices = nonempty[:size]
                sizes = compressed
            if size:
                built.starts = new(size + 1, index_dtype)
                starts_scan(sizes, built.starts, queue=queue, size=size)
            else:
                built.starts = zeros(queue, 1, index_dtype, allocator=allocator)
            built.count = int(built.starts[size].get())
        for child, mother in self.count_sharing.items():
            if child not in omitted:
                shared = result[mother]
                result[child] = BuiltList(shared.count, shared.starts, None,
                                          shared.num_nonempty_lists, shared.nonempty_indices,
                                          shared.compressed_indices)
        write_args: list[Any] = []
        for name, dtype in self.lists:
            if name in omitted:
                continue
            built = result[name]
            built.lists = new(built.count or 0, dtype)
            write_args.append(built.lists)
            if name not in self.count_sharing:
                write_args.append(built.starts)
                if name in self.eliminated:
                    write_args.append(built.compressed_indices)
        event = self._launch(write_kernel, queue, n, [*write_args, *args], [event])
        return {name: result[name] for name in names if name in result}, event


def __getattr__(name: str) -> Any:
    raise unsupported("ppcl.algorithm", name)


__all__ = ["BuiltList", "KeyValueSorter", "ListOfListsBuilder", "RadixSort", "copy_if",
           "partition", "remove_if", "unique"]
