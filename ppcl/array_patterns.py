"""Reductions of ``ppcl.array`` expressions lowered through the patterns (``ppcl.patterns``).

``(((a * b + c) * d - a) * 0.5).sum()``, ``abs(x).sum()``, ``dot``, ``max`` and ``min`` of
contiguous arrays of one real dtype become one pattern expression: a user function traced
from the lazy tree (``ppcl.expression``), mapped over the zip of the arrays it reads, then
reduced (Lift's ``reduce o map``). The expression is derived by the BLAS reduction's rules
(vectorize, partial reduce, interleaved accumulators, thread levels) and lowered into the
typed IR, like any pattern, and runs on the arrays' own buffers.

Lowered code has concrete sizes, so an array of ``n`` elements takes two expressions: the
*body*, the first ``n - n % block`` elements (``block``: the derivation's chunk times vector
width) with the tuned derivation, and the *tail*, the rest folded by one work-item together
with the body's result (``sequential_steps``). An array shorter than a block is only a tail.

The derivation's numbers (chunk, vector width, interleaved accumulators, work-group size) are
explored (``patterns.explore``, its cache on disk) per expression shape, dtype, device and size
class (the power of two at or below ``n``) for arrays of at least ``EXPLORE_FROM`` elements;
shorter arrays take ``default_variant`` without measuring. The built kernels are kept in memory
per expression shape and length, so a repeated reduction costs its launches.

The route is taken only with ``PPCL_ARRAY_PATTERNS=1``: each new array length builds its own
kernels (0.3-1 s of C compiling), which a program summing arrays of many lengths would pay on
every one, and on the 2-core development machine the route measured no faster than the
ReductionKernel (1.08x for ``abs(x).sum()``, 1.05x for ``dot``, 0.92x for a fused chain, at 16M
floats). Off, every reduction keeps the ReductionKernel, which takes the length as an argument.

Everything else (complex or 64-bit integer dtypes, mixed dtypes, non-contiguous or broadcast
leaves, operators the patterns' user functions do not have, out-of-order queues) returns None
from ``plan``, with the reason, and keeps ``ppcl.reduction``'s kernel. ``PPCL_DEBUG=array``
prints each reduction's route and why, and the derivation chosen.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.compiler.ir.types import DOUBLE, FLOAT, INT, ScalarType
from ppcl.expression import Leaf, Node, Op, Scalar
from ppcl.patterns import codegen, explore
from ppcl.patterns import derive as d
from ppcl.patterns import dsl as p
from ppcl.patterns import expr as px
from ppcl.patterns.run import Runnable
from ppcl.patterns.types import PatternTypeError, array
from ppcl.patterns.userfun import UserFun, call
from ppcl.settings import parse_switch, read_settings

_DEBUG = read_settings().debug.shows("array")

SCALARS: dict[np.dtype, ScalarType] = {np.dtype(np.float32): FLOAT,
                                       np.dtype(np.float64): DOUBLE,
                                       np.dtype(np.int32): INT}
"""The dtypes the route takes: their sums are exact (integers, modulo 2**32 as the other
route's) or within float reordering, and max/min have a neutral literal."""

_OPS = ("+", "-", "*", "/", "neg", "abs", "max", "min")
EXPLORE_FROM = 1 << 20
"""Arrays of at least this many elements have their derivation explored (measured once per
size class, then read from the cache); shorter ones take the default."""


@dataclass(frozen=True)
class Variant:
    """The numbers of a reduction's derivation (``derive.reduction_steps``)."""

    chunk: int  # vectors per work-item; 0: one work-item folds the body (``vector_steps``)
    width: int
    interleave: int
    local_size: int

    @property
    def block(self) -> int:
        """The body's length is a multiple of this."""
        return (self.chunk or self.interleave) * self.width

    def steps(self) -> d.Derivation:
        if self.chunk == 0:
            return d.vector_steps(self.width, self.interleave)
        return d.reduction_steps(self.chunk, self.width, self.interleave)

    def __str__(self) -> str:
        if self.chunk == 0:
            return f"one work-item,width={self.width},interleave={self.interleave}"
        return (f"chunk={self.chunk},width={self.width},interleave={self.interleave},"
                f"local={self.local_size}")


ONE_ITEM_BELOW = 1 << 17
"""Shorter arrays are folded by one work-item in one launch: waking the device's other threads
and a second launch for the partials cost more than they save."""


def default_variant(dtype: np.dtype, n: int) -> Variant:
    """Without measuring: 32-byte vectors, four of them accumulated in turn; one work-item
    below ``ONE_ITEM_BELOW`` elements, else 256 vectors a work-item."""
    width = max(1, 32 // dtype.itemsize)
    return Variant(0 if n < ONE_ITEM_BELOW else 256, width, 4, 1 if n < ONE_ITEM_BELOW else 8)


def candidates(dtype: np.dtype) -> list[Variant]:
    """The points explored: vectors of 32 and 64 bytes, chunks of 256 to 4096 vectors, one
    or four accumulators, groups of 8 work-items, and one group size of 1 for comparison."""
    width = max(1, 32 // dtype.itemsize)
    found = [Variant(chunk, w, k, 8) for chunk in (256, 1024, 4096) for w in (width, 2 * width)
             for k in (1, 4)]
    return [*found, Variant(1024, width, 4, 1)]


# ---------------------------------------------------------------------- expression shapes


class Unsupported(Exception):
    """Why a reduction keeps the ReductionKernel route."""


@dataclass(frozen=True)
class Shape:
    """A lazy tree without its arrays and scalar values: ``tree`` nests ``("leaf", k)``,
    ``("scalar", k)`` and ``(op, children...)``; arrays and scalars are numbered in the order
    they are first met."""

    kind: str
    dtype: np.dtype
    tree: Any
    leaves: int
    scalars: int

    def show(self) -> str:
        return _show(self.tree)


def _show(tree: Any) -> str:
    if tree[0] == "leaf":
        return f"x{tree[1]}"
    if tree[0] == "scalar":
        return f"s{tree[1]}"
    op, *args = tree
    if len(args) == 1:
        return f"{'-' if op == 'neg' else op}({_show(args[0])})"
    if op in ("max", "min"):
        return f"{op}({_show(args[0])}, {_show(args[1])})"
    return f"({_show(args[0])} {op} {_show(args[1])})"


def shape_of(node: Node, kind: str, dtype: np.dtype, size: int
             ) -> tuple[Shape, list[Any], list[Any]]:
    """The shape of ``node`` folded by ``kind`` in ``dtype`` over ``size`` elements, its arrays
    and its scalar values; ``Unsupported`` says why the patterns cannot take it."""
    if dtype not in SCALARS:
        raise Unsupported(f"dtype {dtype} (the route takes {', '.join(map(str, SCALARS))})")
    if dtype.kind == "f" and kind in ("max", "min"):
        raise Unsupported(f"{kind} of {dtype} (its fold, f{kind}, drops a NaN that the "
                          "ReductionKernel keeps, as numpy does)")
    arrays: list[Any] = []
    numbers: dict[int, int] = {}
    scalars: list[Any] = []

    def walk(n: Node) -> Any:
        if n.dtype != dtype:
            raise Unsupported(f"a {n.dtype} operand in a {dtype} reduction")
        if isinstance(n, Leaf):
            a = n.array
            number = numbers.get(id(a))
            if number is None:
                if a._expr is not None:
                    raise Unsupported("an operand is an unevaluated expression")
                if a.size != size:
                    raise Unsupported(f"an operand of {a.size} elements is broadcast")
                if not a.flags.c_contiguous:
                    raise Unsupported("an operand is not contiguous")
                number = numbers[id(a)] = len(arrays)
                arrays.append(a)
            return ("leaf", number)
        if isinstance(n, Scalar):
            scalars.append(n.value)
            return ("scalar", len(scalars) - 1)
        if not isinstance(n, Op):
            raise Unsupported(f"{type(n).__name__.lower()} node")
        if n.op not in _OPS or (n.op == "/" and dtype.kind != "f") \
                or (n.op in ("max", "min") and dtype.kind == "f"):  # fmax drops a NaN
            raise Unsupported(f"operator {n.op} on {dtype}")
        return (n.op, *(walk(a) for a in n.args))

    tree = walk(node)
    return Shape(kind, dtype, tree, len(arrays), len(scalars)), arrays, scalars


def _evaluate(tree: Any, values: tuple[Any, ...], leaves: int, prefix: str) -> Any:
    """The tree over traced values: arrays first, then scalars; ``prefix`` is ``f`` for
    floating dtypes (``fmax``, not ``max``)."""
    if tree[0] == "leaf":
        return values[tree[1]]
    if tree[0] == "scalar":
        return values[leaves + tree[1]]
    op, *args = tree
    vals = [_evaluate(a, values, leaves, prefix) for a in args]
    if op == "neg":
        return -vals[0]
    if op == "abs":
        return abs(vals[0])
    if op in ("max", "min"):
        return call(prefix + op, vals[0], vals[1])
    a, b = vals
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b


# ---------------------------------------------------------------------- pattern expressions


@dataclass(frozen=True)
class Form:
    """A shape as pattern expressions: ``body(n)`` the reduction of ``n`` elements,
    ``tail(n, head)`` the same folded together with a one-element ``head``."""

    shape: Shape
    element: UserFun
    fold: UserFun
    neutral: float | int

    @property
    def scalar(self) -> ScalarType:
        return SCALARS[self.shape.dtype]

    def inputs(self, length: int | str) -> tuple[px.Param, ...]:
        t = self.scalar
        return (*(p.param(f"x{k}", array(t, length)) for k in range(self.shape.leaves)),
                *(p.param(f"s{k}", t) for k in range(self.shape.scalars)))

    def reduction(self, inputs: tuple[px.Param, ...]) -> px.Expr:
        arrays = inputs[:self.shape.leaves]
        scalars = inputs[self.shape.leaves:]
        zipped = arrays[0] if len(arrays) == 1 else p.zip(*arrays)
        if len(arrays) == 1 and not scalars:
            mapped = p.map(self.element)(zipped)
        else:
            def element(t: px.Expr) -> px.Expr:
                parts = [t] if len(arrays) == 1 else [p.get(k)(t) for k in range(len(arrays))]
                return p.apply(self.element, *parts, *scalars)
            mapped = p.map(element)(zipped)
        return p.reduce(self.fold, self.neutral)(mapped)

    def tail(self, inputs: tuple[px.Param, ...], head: px.Param) -> px.Expr:
        return p.map(self.fold)(p.zip(self.reduction(inputs), head))


_forms: dict[Shape, Form] = {}


def form_of(shape: Shape) -> Form:
    found = _forms.get(shape)
    if found is not None:
        return found
    t = SCALARS[shape.dtype]
    digest = hashlib.sha256(repr((shape.tree, shape.dtype.str)).encode()).hexdigest()[:10]
    tree, leaves = shape.tree, shape.leaves
    prefix = "f" if shape.dtype.kind == "f" else ""

    def element(*values: Any) -> Any:
        return _evaluate(tree, values, leaves, prefix)
    element.__qualname__ = f"array_{digest}"
    fun = UserFun.trace(f"array_{digest}", [t] * (shape.leaves + shape.scalars), t, element)
    if shape.kind == "sum":
        fold = UserFun.trace(f"sum_{t}", [t, t], t, lambda a, b: a + b)
        neutral: float | int = 0.0 if shape.dtype.kind == "f" else 0
    else:
        kind = shape.kind
        fold = UserFun.trace(f"{kind}_{t}", [t, t], t,
                             lambda a, b: call(prefix + kind, a, b))
        if shape.dtype.kind == "f":
            neutral = float("-inf") if kind == "max" else float("inf")
        else:
            info = np.iinfo(shape.dtype)
            neutral = int(info.min if kind == "max" else info.max)
    found = _forms[shape] = Form(shape, fun, fold, neutral)
    return found


# ---------------------------------------------------------------------- built reductions


@dataclass
class Built:
    """A form built for one length: the body (or None) and the tail (or None)."""

    variant: Variant
    origin: str  # "explored", "cached" or "default"
    derivation: str
    body: Runnable | None
    body_length: int
    tail: Runnable | None
    head: Any  # the body's result when a tail follows


_built: weakref.WeakKeyDictionary[cl.Context, dict[tuple[Shape, int], Built]] = \
    weakref.WeakKeyDictionary()
_sub_buffers: weakref.WeakKeyDictionary[Any, dict[tuple[int, int], Any]] = \
    weakref.WeakKeyDictionary()


def _lower_body(form: Form, variant: Variant, length: int) -> tuple[codegen.Lowered, str]:
    inputs = form.inputs("N")
    steps = variant.steps()
    derived = d.derive(form.reduction(inputs), steps)
    lowered = codegen.lower(derived, inputs, {"N": length}, variant.local_size, "array_body")
    return lowered, d.show_derivation(steps)


def _lower_tail(form: Form, length: int, with_head: bool) -> codegen.Lowered:
    inputs = form.inputs("N")
    head = p.param("head", array(form.scalar, 1))
    e = form.tail(inputs, head) if with_head else form.reduction(inputs)
    derived = d.derive(e, d.sequential_steps())
    return codegen.lower(derived, (*inputs, head) if with_head else inputs, {"N": length},
                         None, "array_tail")


def _choose(context: cl.Context, queue: cl.CommandQueue, form: Form, n: int,
            given: dict[str, Any]) -> tuple[Variant, str]:
    """The variant for ``n`` elements: explored on the arrays themselves (their first
    ``size class`` elements) for a long array, else the default."""
    dtype = form.shape.dtype
    if n < EXPLORE_FROM:
        return default_variant(dtype, n), "default"
    size_class = 1 << (n.bit_length() - 1)
    inputs = form.inputs("N")
    problem = d.Problem(f"array {form.shape.kind} of {form.shape.show()}",
                        form.reduction(inputs), inputs, d.reduction_steps)
    points = {explore.Variant(v.chunk, v.width, v.local_size, v.interleave): v
              for v in candidates(dtype) if size_class % v.block == 0}
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, dtype.itemsize)

    def measure(derived: px.Expr, local: int) -> float:
        lowered = codegen.lower(derived, inputs, {"N": size_class}, local, "array_body")
        runnable = Runnable(context, lowered, given=True)
        args = {**given, "out": out}
        runnable.enqueue(queue, args).wait()  # built and warm
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            runnable.enqueue(queue, args).wait()
            best = min(best, time.perf_counter() - start)
        return best

    device = queue.device
    result = explore.explore(problem, {"N": size_class}, f"{device.name}/{device.vendor}",
                             list(points), measure, progress=sys.stderr if _DEBUG else None)
    chosen = points[result.best.variant]
    origin = "explored" if result.measured else "cached"
    if _DEBUG:
        print(f"ppcl array: explored {len(result.results)} variants for {problem.name} "
              f"{dtype}, size class {size_class} ({result.measured} measured now, the rest "
              f"from {result.path})", file=sys.stderr)
    return chosen, origin


def _build(context: cl.Context, queue: cl.CommandQueue, form: Form, n: int,
           given: dict[str, Any]) -> Built:
    variant, origin = _choose(context, queue, form, n, given)
    body_length = n - n % variant.block
    body = tail = head = None
    derivation = d.show_derivation(d.sequential_steps())
    if body_length:
        lowered, derivation = _lower_body(form, variant, body_length)
        body = Runnable(context, lowered, given=True)
    if body_length < n:
        tail = Runnable(context, _lower_tail(form, n - body_length, body is not None),
                        given=True)
        if body is not None:
            head = cl.Buffer(context, cl.mem_flags.READ_WRITE, form.shape.dtype.itemsize)
    return Built(variant, origin, derivation, body, body_length, tail, head)


def _region(buffer: Any, origin: int, size: int) -> Any:
    """``size`` bytes of ``buffer`` from ``origin``: the buffer itself from 0, else a
    sub-buffer, kept while the buffer lives."""
    if origin == 0:
        return buffer
    per_buffer = _sub_buffers.setdefault(buffer, {})
    sub = per_buffer.get((origin, size))
    if sub is None:
        sub = per_buffer[(origin, size)] = buffer.get_sub_region(origin, size)
    return sub


# ---------------------------------------------------------------------- the route


def plan(node: Node, kind: str, dtype: np.dtype, size: int, queue: cl.CommandQueue
         ) -> tuple[Form, list[Any], list[Any]] | str:
    """The form, arrays and scalars of a reduction the patterns take, or why not."""
    if not parse_switch("PPCL_ARRAY_PATTERNS", os.environ.get("PPCL_ARRAY_PATTERNS", "")):
        return "the patterns route is off (PPCL_ARRAY_PATTERNS=1: a kernel built per length)"
    if size == 0:
        return "no elements"
    if queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
        return "an out-of-order queue (the built reduction's temporaries are shared)"
    try:
        shape, arrays, scalars = shape_of(node, kind, dtype, size)
    except Unsupported as why:
        return str(why)
    if not arrays:
        return "no array operand"
    align = queue.device.mem_base_addr_align // 8  # bits, as OpenCL reports it
    if any(a.offset % align for a in arrays):
        return f"an operand's offset is not a multiple of {align} bytes"
    return form_of(shape), arrays, scalars


def reduce(form: Form, arrays: list[Any], scalars: list[Any], queue: cl.CommandQueue,
           out_buffer: Any, wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
    """Enqueue the reduction of ``arrays`` (``scalars`` for the shape's scalars) into the
    first element of ``out_buffer``, after ``wait_for``; the event of its last launch, which
    waits for the others."""
    context = queue.context
    n = arrays[0].size
    dtype = form.shape.dtype
    per_context = _built.setdefault(context, {})
    key = (form.shape, n)
    built = per_context.get(key)
    itemsize = dtype.itemsize
    given: dict[str, Any] = {f"s{k}": dtype.type(v) for k, v in enumerate(scalars)}
    for k, a in enumerate(arrays):
        given[f"x{k}"] = _region(a._buffer, a.offset, n * itemsize)
    if built is None:
        built = per_context[key] = _build(context, queue, form, n, given)
        if _DEBUG:
            print(f"ppcl array: built {form.shape.kind} of {form.shape.show()} {dtype}[{n}]: "
                  f"{built.variant} ({built.origin}), body {built.body_length} elements "
                  f"derived by {built.derivation}, tail {n - built.body_length}",
                  file=sys.stderr)
    if _DEBUG:
        print(f"ppcl array: {form.shape.kind} of {form.shape.show()} {dtype}[{n}]: patterns "
              f"({built.variant}, {built.origin})", file=sys.stderr)
    event = None
    if built.body is not None:
        given["out"] = built.head if built.tail is not None else out_buffer
        event = built.body.enqueue(queue, given, wait_for)
        wait_for = [event]  # the tail reads the body's head
    if built.tail is not None:
        start = built.body_length * itemsize
        for k, a in enumerate(arrays):
            given[f"x{k}"] = _region(a._buffer, a.offset + start, (n - built.body_length)
                                     * itemsize)
        given["head"] = built.head
        given["out"] = out_buffer
        event = built.tail.enqueue(queue, given, wait_for)
    assert event is not None
    return event


def report(kind: str, dtype: np.dtype, size: int, why: str) -> None:
    """The other route's line of ``PPCL_DEBUG=array``."""
    if _DEBUG:
        print(f"ppcl array: {kind} {dtype}[{size}]: reduction kernel ({why})", file=sys.stderr)


__all__ = ["EXPLORE_FROM", "Form", "PatternTypeError", "Shape", "Unsupported", "Variant",
           "candidates", "default_variant", "plan", "reduce", "report", "shape_of"]
