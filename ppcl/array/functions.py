"""``ppcl.array``'s module functions, PyOpenCL's: making arrays (``to_device``, ``empty``,
``zeros``, ``arange``...), joining them, reductions (``sum``, ``dot``, ``subset_*``), index
arrays (``take``, ``put``), elementwise choices and logic, ``matmul``; and ``vec``, PyOpenCL's
old name for ``cltypes``. The array type and its evaluation are in ``core.py``."""


from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.array.core import (
    _NO_INITIAL,
    Array,
    _assign,
    _cached,
    _check_fill_value,
    _reduce,
    _reduction_kernel,
)
from ppcl.elementwise import ElementwiseKernel, record_event, wait_list
from ppcl.expression import (
    Index,
    Node,
    Op,
    Printed,
    array_access,
    convert,
    leaves,
    print_tree,
    scalar_node,
)
from ppcl.gemv import gemv
from ppcl.runtime.errors import make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.scan import GenericScanKernel
from ppcl.strides import shape_tuple
from ppcl.tools import dtype_to_ctype

_SAME_AS_TRANSFER: Any = object()


def to_device(queue: cl.CommandQueue, ary: Any, allocator: Any = None,
              async_: bool = False, array_queue: Any = _SAME_AS_TRANSFER,
              **kwargs: Any) -> Array:
    """A device copy of ``ary`` laid out as it is, as PyOpenCL's: a Fortran-ordered array
    keeps its order, so a kernel given ``.data`` reads the bytes in the host's order
    (other layouts are copied in C order). ``array_queue=None`` leaves the array without a
    queue."""
    ary = np.asarray(ary)
    if ary.dtype == object:
        raise make_error("to_device", "INVALID_VALUE", "object arrays cannot go to a device")
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    result = Array(queue, ary.shape, ary.dtype, order=order, allocator=allocator)
    if order == "F":
        if result.size:
            # the same bytes: the transpose of a Fortran array is C-contiguous
            host = np.require(ary.T, requirements="C")
            record_event(cl.enqueue_copy(queue, result._buffer, host, is_blocking=True),
                         [result])
    else:
        result.set(np.require(ary, requirements="C"), queue)
    if array_queue is not _SAME_AS_TRANSFER:
        result.queue = array_queue
    return result


def empty(queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
          allocator: Any = None, **kwargs: Any) -> Array:
    """PyOpenCL's ``empty`` is its Array constructor: ``data=``, ``offset=``, ``strides=`` and
    ``events=`` wrap an existing buffer as they do there."""
    return Array(queue, shape, dtype, order=order, allocator=allocator, **kwargs)


def zeros(queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
          allocator: Any = None) -> Array:
    return _zero(empty(queue, shape, dtype, order, allocator))


def _zero(made: Array) -> Array:
    """A newly made array filled with zeros. An array of records is zeroed byte by byte, as
    PyOpenCL does: a kernel filling it needs its C name, registered with
    ``tools.get_or_register_dtype``, which zeros() and zeros_like() do not ask for."""
    if made.dtype.fields is None:
        return made.fill(0)
    made._before_write()
    queue = made._queue(None, "zeros")
    if made.nbytes == 0:
        record_event(enqueue_no_work(queue, wait_list([made])), [made])
        return made
    record_event(cl.enqueue_fill_buffer(queue, made._buffer, np.uint8(0), made.offset,
                                        made.nbytes, wait_for=wait_list([made])), [made])
    return made


def empty_like(ary: Array, queue: Any = None, allocator: Any = None, *,
               dtype: Any = None) -> Array:
    """``empty_like(ary, queue, allocator)`` in PyOpenCL's order; ``dtype`` is ours, by
    keyword only."""
    # the layout of ``ary`` where it has one of the two (a transposed array stays "F")
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return ary._same_class(queue or ary.queue or ary.context, ary.shape, dtype or ary.dtype,
                           order=order, allocator=allocator or ary.allocator)


def zeros_like(ary: Array, queue: Any = None, allocator: Any = None, *,
               dtype: Any = None) -> Array:
    return _zero(empty_like(ary, queue, allocator, dtype=dtype))


def arange(queue: cl.CommandQueue, *args: Any, dtype: Any = None, allocator: Any = None,
           **kwargs: Any) -> Array:
    """``arange(queue, [start,] stop[, step], dtype=None)`` as numpy's."""
    start, stop, step = (args + (None,) * 3)[:3] if len(args) != 1 else (0, args[0], None)
    start = kwargs.get("start", start) or 0
    stop = kwargs.get("stop", stop)
    step = kwargs.get("step", step)
    if step is None:
        step = 1
    if step == 0:
        raise make_error("ppcl.array.arange", "INVALID_VALUE", "arange with a step of 0")
    if dtype is None:
        dtype = np.arange(start, stop if stop is not None else start + step, step).dtype \
            if stop is not None else np.array(start).dtype
    dtype = np.dtype(dtype)
    count = builtins.max(0, int(np.ceil((stop - start) / step)))
    result = Array(queue, (count,), dtype, allocator=allocator)
    # computed in double for a real or complex result (the imaginary parts are 0), so that a
    # fractional step is not truncated to an integer
    index = Index(np.dtype(np.float64 if dtype.kind in "fc" else np.int64))
    node = Op(index.dtype, "+", (Op(index.dtype, "*", (index, scalar_node(step, index.dtype))),
                                 scalar_node(start, index.dtype)))
    _assign(result, node)
    return result


def concatenate(arrays: Sequence[Array], axis: int = 0, queue: Any = None,
                allocator: Any = None) -> Array:
    if not arrays:
        raise make_error("ppcl.array.concatenate", "INVALID_VALUE",
                         "concatenate needs at least one array")
    first = arrays[0]
    shape = list(first.shape)
    shape[axis] = builtins.sum(a.shape[axis] for a in arrays)
    dtype = np.result_type(*(a.dtype for a in arrays))
    result = Array(queue or first.queue, tuple(shape), dtype, allocator=allocator)
    position = 0
    for piece in arrays:
        index = [slice(None)] * len(shape)
        index[axis] = slice(position, position + piece.shape[axis])
        result[tuple(index)] = piece
        position += piece.shape[axis]
    return result


def _check_initial(initial: Any, routine: str) -> None:
    if initial is not _NO_INITIAL and not np.isscalar(initial):
        raise make_error(routine, "INVALID_VALUE", f"{routine}: 'initial' is not a scalar")


def sum(a: Array, dtype: Any = None, queue: Any = None, slice: Any = None,  # noqa: A001
        initial: Any = _NO_INITIAL) -> Array:
    """The sum of the elements (of ``a[slice]``), plus ``initial`` where given, as numpy's
    and PyOpenCL's."""
    _check_initial(initial, "ppcl.array.sum")
    if slice is not None:
        a = a[slice]
    result = _reduce(a, a._node(), "sum", np.dtype(dtype or a.dtype), queue)
    if initial is not _NO_INITIAL:
        result += a.dtype.type(initial)
    return result


def _extreme(kind: str, a: Any, queue: Any, initial: Any) -> Any:
    """max or min of ``a``; with ``initial``, of ``a`` and it (an empty ``a`` gives
    ``initial``), as PyOpenCL's."""
    if np.isscalar(a):
        return np.array(a).dtype.type(a)
    _check_initial(initial, f"ppcl.array.{kind}")
    if a.size == 0 and initial is not _NO_INITIAL:
        return initial
    result = _reduce(a, a._node(), kind, a.dtype, queue)
    if initial is _NO_INITIAL:
        return result
    pick = maximum if kind == "max" else minimum
    return pick(result, a.dtype.type(initial), queue=queue)


def max(a: Any, queue: Any = None, initial: Any = _NO_INITIAL) -> Any:  # noqa: A001
    return _extreme("max", a, queue, initial)


def min(a: Any, queue: Any = None, initial: Any = _NO_INITIAL) -> Any:  # noqa: A001
    return _extreme("min", a, queue, initial)


def _pair(a: Array, b: Array, conjugate: bool) -> Node:
    if a.shape != b.shape:
        raise make_error("ppcl.array.dot", "INVALID_VALUE",
                         f"dot of shapes {a.shape} and {b.shape}")
    left = a.conj()._node() if conjugate and a.dtype.kind == "c" else a._node()
    dtype = np.result_type(a.dtype, b.dtype)
    return Op(dtype, "*", (left, b._node()))


def dot(a: Array, b: Array, dtype: Any = None, queue: Any = None, slice: Any = None) -> Array:
    if slice is not None:
        a, b = a[slice], b[slice]
    node = _pair(a, b, False)
    return _reduce(a, node, "sum", np.dtype(dtype or node.dtype), queue)


def vdot(a: Array, b: Array, dtype: Any = None, queue: Any = None, slice: Any = None) -> Array:
    if slice is not None:
        a, b = a[slice], b[slice]
    node = _pair(a, b, True)
    return _reduce(a, node, "sum", np.dtype(dtype or node.dtype), queue)


def _subset(kind: str, subset: Array, a: Array, queue: Any, dtype: Any = None,
            b: Array | None = None) -> Array:
    """The ``kind`` reduction of ``a[subset[i]]`` (of ``a[subset[i]] * b[subset[i]]`` when
    ``b`` is given)."""
    operands = (a,) if b is None else (a, b)
    if subset.dtype.kind not in "iu" \
            or builtins.any(x.ndim != 1 or not x.flags.c_contiguous for x in operands):
        raise make_error(f"ppcl.array.subset_{kind}", "INVALID_VALUE",
                         "subset_* takes an integer index array and contiguous 1-d arrays")
    if subset.size == 0 and kind != "sum":
        raise make_error(f"ppcl.array.subset_{kind}", "INVALID_VALUE",
                         f"subset_{kind} of an empty subset: a zero-size array has no {kind}")
    dtype = np.dtype(dtype or np.result_type(*(x.dtype for x in operands)))
    subset = subset._concrete()
    printed = Printed()
    index = array_access(printed, subset, subset.shape)
    code = " * ".join(convert(array_access(printed, x._concrete(), x.shape, index), x.dtype,
                              dtype) for x in operands)
    kernel = _reduction_kernel(a.context, kind, dtype, code, printed, "ppcl_subset")
    queue = a._queue(queue, f"subset_{kind}")
    out = Array(queue, (), dtype)
    record_event(kernel.run(queue, printed.values, subset.size, out._buffer, 0, None,
                            wait_list([subset, *operands])), [out, subset, *operands])
    return out


def subset_sum(subset: Array, a: Array, dtype: Any = None, queue: Any = None) -> Array:
    return _subset("sum", subset, a, queue, dtype)


def subset_dot(subset: Array, a: Array, b: Array, dtype: Any = None, queue: Any = None,
               slice: Any = None) -> Array:
    """The sum of ``a[i] * b[i]`` over the indices ``i`` in ``subset``."""
    if slice is not None:
        subset = subset[slice]
    return _subset("sum", subset, a, queue, dtype, b)


def subset_max(subset: Array, a: Array, queue: Any = None, slice: Any = None) -> Array:
    if slice is not None:
        subset = subset[slice]
    return _subset("max", subset, a, queue)


def subset_min(subset: Array, a: Array, queue: Any = None, slice: Any = None) -> Array:
    if slice is not None:
        subset = subset[slice]
    return _subset("min", subset, a, queue)


def diff(array: Array, queue: Any = None, allocator: Any = None) -> Array:
    """``array[1:] - array[:-1]`` of a 1-d array (lazy)."""
    if array.ndim != 1:
        raise make_error("ppcl.array.diff", "INVALID_VALUE", "diff takes 1-d arrays")
    result = array[1:] - array[:-1]
    if allocator is not None:
        result.allocator = allocator  # lazy: its buffer is allocated when it is evaluated
    return result


def stack(arrays: Sequence[Array], axis: int = 0, queue: Any = None) -> Array:
    """Arrays of one shape joined along a new ``axis``."""
    shape = arrays[0].shape
    if builtins.any(a.shape != shape for a in arrays):
        raise make_error("ppcl.array.stack", "INVALID_VALUE", "stack needs arrays of one shape")
    axis = axis % (len(shape) + 1)
    result = Array(queue or arrays[0].queue, (*shape[:axis], len(arrays), *shape[axis:]),
                   np.result_type(*(a.dtype for a in arrays)))
    for k, piece in enumerate(arrays):
        result[(slice(None),) * axis + (k,)] = piece
    return result


def take(a: Array, indices: Array, out: Array | None = None, queue: Any = None,
         wait_for: Any = None) -> Array:
    """``out[i] = a[indices[i]]`` for a 1-d ``a``."""
    if a.ndim != 1 or indices.dtype.kind not in "iu":
        raise make_error("ppcl.array.take", "INVALID_VALUE",
                         "take needs a 1-d array and integer indices")
    a, indices = a._concrete(), indices._concrete()
    a._wait_for(wait_for)
    if out is None:
        out = Array(queue or indices.queue, indices.shape, a.dtype, allocator=a.allocator)
    _check_out(out, indices.shape, "ppcl.array.take")
    out._before_write()
    printed = Printed()
    target = array_access(printed, out, out.shape)
    source = array_access(printed, a, a.shape, array_access(printed, indices, out.shape))
    operation = f"{target} = {source}"
    kernel = _cached(a.context, ("take", operation, printed.key()),
                     lambda: ElementwiseKernel(a.context, printed.args, operation,
                                               name="ppcl_take", preamble=printed.preamble()))
    record_event(kernel.launch(out._queue(queue, "take"), printed.values, out.size,
                               wait_for=wait_list([out, a, indices])), [out, a, indices])
    return out


def as_strided(ary: Array, shape: Any = None, strides: Any = None) -> Array:
    """A view of ``ary``'s buffer with ``shape`` and byte ``strides`` (as numpy's and
    PyOpenCL's ``as_strided``: nothing checks that the view stays inside the buffer)."""
    base = ary._concrete()
    return base._view(shape_tuple(ary.shape if shape is None else shape),
                      tuple(ary.strides if strides is None else strides), ary.offset)


def _outputs(arrays: Sequence[Array], out: Any, shape: Any, queue: Any,
             routine: str) -> list[Array]:
    """The ``out`` list of the multi_* functions, made like ``arrays[0]`` where not given."""
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1:
        raise make_error(routine, "INVALID_VALUE", f"{routine} needs arrays of one dtype")
    if out is None:
        return [arrays[0]._same_class(queue or arrays[0].queue, shape, arrays[0].dtype,
                                      allocator=arrays[0].allocator) for _ in arrays]
    if len(out) != len(arrays):
        raise make_error(routine, "INVALID_VALUE", "out and arrays must have the same length")
    return list(out)


def multi_take(arrays: Sequence[Array], indices: Array, out: Any = None,
               queue: Any = None) -> list[Array]:
    """``take(a, indices)`` of each of ``arrays``, as PyOpenCL's."""
    if not arrays:
        return []
    outputs = _outputs(arrays, out, indices.shape, queue or indices.queue, "multi_take")
    for source, target in zip(arrays, outputs):
        take(source, indices, out=target, queue=queue)
    return outputs


def multi_put(arrays: Sequence[Array], dest_indices: Array, dest_shape: Any = None,
              out: Any = None, queue: Any = None, wait_for: Any = None) -> list[Array]:
    """``out[k][dest_indices[i]] = arrays[k][i]`` for each k, as PyOpenCL's."""
    if not arrays:
        return []
    outputs = _outputs(arrays, out, dest_shape, queue or dest_indices.queue, "multi_put")
    for source, target in zip(arrays, outputs):
        target._wait_for(wait_for)
        put(target, dest_indices, source, queue=queue, repeat=True)
    return outputs


def multi_take_put(arrays: Sequence[Array], dest_indices: Array, src_indices: Array,
                   dest_shape: Any = None, out: Any = None, queue: Any = None,
                   src_offsets: Any = None) -> list[Array]:
    """``out[k][dest_indices[i]] = arrays[k][src_indices[i] + src_offsets[k]]``, as
    PyOpenCL's."""
    if not arrays:
        return []
    if src_indices.shape != dest_indices.shape or src_indices.ndim != 1:
        raise make_error("multi_take_put", "INVALID_VALUE",
                         "src_indices and dest_indices must be 1-d and of one shape")
    if src_offsets is not None and len(src_offsets) != len(arrays):
        raise make_error("multi_take_put", "INVALID_VALUE",
                         "src_offsets must have one offset per array")
    outputs = _outputs(arrays, out, dest_shape, queue or src_indices.queue, "multi_take_put")
    for k, (source, target) in enumerate(zip(arrays, outputs)):
        picked = src_indices if src_offsets is None else \
            (src_indices + src_indices.dtype.type(src_offsets[k])).astype(src_indices.dtype)
        put(target, dest_indices, take(source, picked, queue=queue), queue=queue)
    return outputs


def put(a: Array, indices: Array, values: Any, queue: Any = None, *,
        repeat: bool = False) -> Array:
    """``a[indices[i]] = values[i]`` (or a scalar ``values``) for a 1-d ``a``, as PyOpenCL's
    ``a[indices] = values``. With ``repeat`` (``multi_put``, like numpy's ``put``) a 1-d
    ``values`` of another length is repeated: ``a[indices[i]] = values[i % values.size]``."""
    routine = "Array.__setitem__"
    if a.ndim != 1 or indices.dtype.kind not in "iu" or indices.ndim != 1:
        raise make_error(routine, "INVALID_VALUE",
                         "a[indices] = values needs a 1-d array and 1-d integer indices")
    if isinstance(values, np.ndarray) and values.ndim:
        values = to_device(a._queue(queue, routine), values.astype(a.dtype, copy=False))
    repeated = None
    if isinstance(values, Array):
        if values.shape != indices.shape and values.size != 1:
            if not (repeat and values.ndim == 1 and values.size):
                raise make_error(routine, "INVALID_VALUE",
                                 f"{values.size} values for {indices.size} indices")
            repeated = values._concrete()
        source = values._node()
    else:
        _check_fill_value(values, a.dtype, routine)
        source = scalar_node(values, a.dtype)
    a._before_write()
    indices = indices._concrete()
    printed = Printed()
    index = array_access(printed, indices, indices.shape)
    target = array_access(printed, a, a.shape, index)
    if repeated is None:
        value = print_tree(source, indices.shape, printed)
        arrays = [a, indices, *leaves(source)]
    else:
        value = array_access(printed, repeated, repeated.shape, f"(i % {repeated.size}L)")
        arrays = [a, indices, repeated]
    operation = f"{target} = {convert(value, source.dtype, a.dtype)}"
    kernel = _cached(a.context, ("put", operation, printed.key()),
                     lambda: ElementwiseKernel(a.context, printed.args, operation,
                                               name="ppcl_put", preamble=printed.preamble()))
    record_event(kernel.launch(a._queue(queue, routine), printed.values, indices.size,
                               wait_for=wait_list(arrays)), arrays)
    return a


def cumsum(a: Array, output_dtype: Any = None, queue: Any = None,
           wait_for: Sequence[cl.Event] | None = None, *, return_event: bool = False) -> Any:
    """The inclusive prefix sum of a 1-d array, as a new array (``(event, array)`` with
    ``return_event``, as PyOpenCL's)."""
    dtype = np.dtype(output_dtype or a.dtype)
    result = a.astype(dtype) if dtype != a.dtype else a.copy()
    result._materialize()
    if a.ndim != 1:
        raise make_error("ppcl.array.cumsum", "INVALID_VALUE", "cumsum takes 1-d arrays")
    kernel = _cached(a.context, ("cumsum", dtype.str), lambda: GenericScanKernel(
        a.context, dtype, f"__global {dtype_to_ctype(dtype)} *x", "x[i]", "a+b", "0",
        "x[i] = item"))
    event = kernel(result, queue=queue, wait_for=wait_for)
    return (event, result) if return_event else result


def maximum(a: Any, b: Any, out: Array | None = None, queue: Any = None) -> Any:
    return _extremum("max", a, b, out, queue)


def minimum(a: Any, b: Any, out: Array | None = None, queue: Any = None) -> Any:
    return _extremum("min", a, b, out, queue)


def _extremum(kind: str, a: Any, b: Any, out: Array | None, queue: Any) -> Any:
    if not isinstance(a, Array) and not isinstance(b, Array):
        return _scalar_result((np.maximum if kind == "max" else np.minimum)(a, b), out)
    lazy = a._binary(b, kind) if isinstance(a, Array) else b._binary(a, kind, True)
    return _result(_on_queue(lazy, queue), out)


def if_positive(criterion: Any, then_: Any, else_: Any, out: Array | None = None,
                queue: Any = None) -> Any:
    if not builtins.any(isinstance(v, Array) for v in (criterion, then_, else_)):
        # as PyOpenCL's: numbers give numpy's where (a true criterion picks then_)
        return _scalar_result(np.where(criterion, then_, else_), out)
    if not isinstance(criterion, Array):
        raise make_error("ppcl.array.if_positive", "INVALID_VALUE",
                         "if_positive takes an array criterion when then_ or else_ is one")
    nodes = [v._node() if isinstance(v, Array) else scalar_node(v, criterion.dtype)
             for v in (then_, else_)]
    dtype = np.result_type(nodes[0].dtype, nodes[1].dtype)
    positive = Op(np.dtype(np.int8), ">", (criterion._node(), scalar_node(0, criterion.dtype)))
    return _result(_on_queue(criterion._lazy(Op(dtype, "where", (positive, *nodes))), queue),
                   out)


def _on_queue(lazy: Array, queue: Any) -> Array:
    """``lazy`` (a new lazy array) run on ``queue`` when one is given: the operands' arrays
    may have none (``with_queue(None)``), as PyOpenCL's ``queue=`` allows."""
    if queue is not None:
        lazy.queue = queue
    return lazy


def _scalar_result(value: Any, out: Array | None) -> Any:
    """The result of a function of numbers alone: numpy's, or ``out`` filled with it."""
    if out is None:
        return value
    out.fill(value)
    return out


def _check_out(out: Array, shape: tuple[int, ...], routine: str) -> None:
    """An ``out=`` array must have the result's shape: a kernel over it would write part of the
    result, or past it."""
    if out.shape != shape:
        raise make_error(routine, "INVALID_VALUE",
                         f"out has shape {out.shape}, the result {shape}")


def _result(lazy: Array, out: Array | None) -> Array:
    if out is None:
        return lazy
    _check_out(out, lazy.shape, "ppcl.array")
    out._before_write()
    _assign(out, lazy._node())
    return out


def matmul(a: Array, x: Array, queue: Any = None) -> Array:
    """``a @ x`` for a 2-d ``a`` and 1-d ``x`` of one real dtype (gemv; an extension of
    PyOpenCL's API)."""
    if a.ndim != 2 or x.ndim != 1 or a.shape[1] != x.shape[0] or a.dtype != x.dtype \
            or a.dtype.kind != "f":
        raise make_error("ppcl.array.matmul", "INVALID_VALUE",
                         f"matmul takes a 2-d and a 1-d float array of one dtype, got "
                         f"{a.dtype} {a.shape} and {x.dtype} {x.shape}")
    a = a._concrete() if a.flags.c_contiguous else a.copy()
    x = x._concrete() if x.flags.c_contiguous else x.copy()
    queue = a._queue(queue, "ppcl.array.matmul")
    rows = a.shape[0]
    y = Array(queue, (rows,), a.dtype, allocator=a.allocator)
    item = a.dtype.itemsize
    record_event(gemv(queue, a.dtype, a.shape, a._buffer, a.offset // item, x._buffer,
                      x.offset // item, y._buffer, 0, wait_list([a, x])), [y, a, x])
    return y


def all(a: Array, queue: Any = None, wait_for: Any = None) -> Array:  # noqa: A001
    return a.all(queue, wait_for)


def any(a: Array, queue: Any = None, wait_for: Any = None) -> Array:  # noqa: A001
    return a.any(queue, wait_for)


def _truth(x: Any) -> Any:
    """``x != 0`` of an array (int8, lazy); a scalar as its truth value."""
    return x != 0 if isinstance(x, Array) else np.int8(bool(x))


def _logical(x1: Any, x2: Any, op: str, out: Array | None, routine: str) -> Array:
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise make_error(routine, "INVALID_VALUE", f"{routine} needs an array operand")
    left, right = _truth(x1), _truth(x2)
    lazy = left & right if op == "and" else left | right
    return _result(lazy, out)


def logical_and(x1: Any, x2: Any, out: Array | None = None, queue: Any = None) -> Array:
    return _logical(x1, x2, "and", out, "ppcl.array.logical_and")


def logical_or(x1: Any, x2: Any, out: Array | None = None, queue: Any = None) -> Array:
    return _logical(x1, x2, "or", out, "ppcl.array.logical_or")


def logical_not(x: Array, out: Array | None = None, queue: Any = None) -> Array:
    return _result(x == 0, out)


def reshape(a: Array, shape: Any) -> Array:
    return a.reshape(shape)


def transpose(a: Array, axes: Sequence[int] | None = None) -> Array:
    return a.transpose(axes)


def hstack(arrays: Sequence[Array], queue: Any = None) -> Array:
    """The arrays side by side: joined along axis 0 when 1-d, else along axis 1."""
    if not arrays:
        raise make_error("ppcl.array.hstack", "INVALID_VALUE", "hstack needs at least one array")
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1, queue=queue)


class _VecLookup:
    """``ppcl.array.vec``: PyOpenCL's old name for ``cltypes``, which programs written for
    OpenCL in Action and older PyOpenCL still use (``vec.zeros_int4()``, ``vec.char16``)."""

    def __getattr__(self, name: str) -> Any:
        warnings.warn("ppcl.array.vec is deprecated, as pyopencl.array.vec is; use ppcl.cltypes "
                      "for OpenCL vector and scalar types", DeprecationWarning, stacklevel=2)
        renamed = {"types": "vec_types", "type_to_scalar_and_count": "vec_type_to_scalar_and_count"}
        return getattr(cltypes, renamed.get(name, name))


vec = _VecLookup()
