"""``pyopencl.array`` on ppcl: n-dimensional arrays in device memory with numpy's manners (the
array type and its evaluation; the module functions are in ``functions.py``).

Arithmetic, comparisons, ``clmath`` functions and ``astype`` are lazy: they build an expression
tree (``ppcl.expression``) and run nothing until the result is needed; then the whole tree runs
as one generated elementwise kernel, or, under ``sum``/``dot``/``max``/``min``, as one reduction
kernel, so ``(a * b + c).sum()`` reads ``a``, ``b`` and ``c`` once and writes no temporary.
Generated kernels are cached per expression shape and dtypes. Before an array is written
(``set``, ``fill``, in-place operators, item assignment, or handing ``.data`` to a kernel),
pending expressions that read it are evaluated, so laziness never changes a result.

Views (slices, ``reshape``, transposes) share the buffer with ``offset`` and ``strides`` in
bytes, as in PyOpenCL; elementwise operations and reductions accept any view, including
negative strides. ``ElementwiseKernel`` arguments must be contiguous, as in PyOpenCL.
"""

from __future__ import annotations

import builtins
import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import array_patterns
from ppcl.elementwise import ElementwiseKernel, completed, record_event, scalar_value, wait_list
from ppcl.expression import (
    Leaf,
    Node,
    Op,
    Printed,
    Scalar,
    array_access,
    convert,
    extremum,
    leaves,
    print_tree,
    result_dtype,
    scalar_node,
    size_of,
)
from ppcl.reduction import ReductionKernel, neutral_of
from ppcl.runtime.errors import (
    ERROR_CODES,
    LogicError,
    invalid_value,
    is_integer,
    make_error,
)
from ppcl.runtime.queue import enqueue_no_work
from ppcl.strides import Flags, c_strides, index_view, reshape_strides, shape_tuple, span

_MAX_TREE = 40
_MAX_EVENTS = 12  # an array's events past this: the oldest are waited for (PyOpenCL's bound)
_pending: dict[int, weakref.ref[Array]] = {}  # lazy arrays not yet evaluated, by id
_kernels: weakref.WeakKeyDictionary[cl.Context, dict[Any, Any]] = weakref.WeakKeyDictionary()


class ArrayHasOffsetError(LogicError, ValueError):
    """PyOpenCL's error for an array that does not start at its buffer's start where one
    must (``ary.data`` of a slice): a ``ValueError`` as there, and ``CL_INVALID_VALUE``."""


def _forget(key: int) -> Any:
    """The callback dropping a collected lazy array from ``_pending``."""
    def forget(_: Any) -> None:
        _pending.pop(key, None)
    return forget


# ``initial`` not given to max, min or sum (None is no value numpy refuses there)
_NO_INITIAL: Any = object()
# ``queue`` not given to ``copy`` (None asks for a copy without a queue)
_OWN_QUEUE: Any = object()


class Array:
    """``pyopencl.array.Array(cq, shape, dtype, order="C", allocator=None, data=None,
    offset=0, strides=None)``; ``cq`` is a queue (or a context, leaving ``queue`` None)."""

    __array_priority__ = 100
    __array_ufunc__ = None  # numpy scalars and arrays on the left defer to our operators

    def __init__(self, cq: Any, shape: Any, dtype: Any, order: str = "C",
                 allocator: Any = None, data: Any = None, offset: int = 0,
                 strides: Any = None, events: Any = None, _expr: Node | None = None) -> None:
        if isinstance(cq, cl.CommandQueue):
            self.queue: cl.CommandQueue | None = cq
            self.context = cq.context
        else:
            self.queue, self.context = None, cq
        self.shape = shape_tuple(shape)
        self.dtype = np.dtype(dtype)
        if order not in ("C", "F"):
            raise make_error("Array", "INVALID_VALUE", f"order is 'C' or 'F', not {order!r}")
        if self.dtype.hasobject:
            raise make_error("Array", "INVALID_VALUE",
                             f"dtype {self.dtype}: Python objects cannot live on a device")
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        self.strides = tuple(strides) if strides is not None else \
            c_strides(self.shape, self.dtype.itemsize, order)
        self.offset = offset
        self.allocator = allocator
        # what a command on the array waits for; a view shares its base's list
        self._events: list[cl.Event] = events if isinstance(events, list) else list(events or [])
        self._expr = _expr
        self._buffer: Any = data
        if _expr is not None:
            _pending[id(self)] = weakref.ref(self, _forget(id(self)))
        elif data is None:
            self._buffer = self._allocate(self.nbytes)

    def _allocate(self, nbytes: int) -> Any:
        if self.allocator is not None:
            return self.allocator(builtins.max(nbytes, 1))
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, builtins.max(nbytes, 1))

    # ------------------------------------------------------------------ buffers and laziness

    def _materialize(self) -> None:
        expr = self._expr
        if expr is None:
            return
        self._buffer = self._allocate(self.nbytes)
        self._expr = None
        _pending.pop(id(self), None)
        _assign(self, expr)

    def _concrete(self) -> Array:
        self._materialize()
        return self

    def _before_write(self) -> None:
        """Evaluate pending expressions that read this array's buffer."""
        self._materialize()
        for ref in list(_pending.values()):
            lazy = ref()
            if lazy is None or lazy._expr is None:
                continue
            if builtins.any(leaf._buffer is self._buffer for leaf in leaves(lazy._expr)):
                lazy._materialize()

    @property
    def base_data(self) -> Any:
        self._before_write()  # a kernel given the buffer may write it
        return self._buffer

    @property
    def data(self) -> Any:
        if self.offset:
            raise ArrayHasOffsetError("Array.data", ERROR_CODES["INVALID_VALUE"],
                                      "the array has an offset: use base_data and offset")
        return self.base_data

    @property
    def flags(self) -> Flags:
        return Flags(self)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def events(self) -> list[cl.Event]:
        """The events of the commands the array's contents wait on, as PyOpenCL's. A lazy
        array (``y = x + x``) is computed first: its events are those of the kernel that makes
        it, which PyOpenCL would have launched already."""
        self._materialize()
        return self._events

    @events.setter
    def events(self, events: list[cl.Event]) -> None:
        self._events = events

    def add_event(self, event: cl.Event) -> None:
        """Add ``event`` to ``events``, which later commands on the array wait for. Earlier
        completed events leave the list (``event`` stays, completed or not, as the last one);
        past ``_MAX_EVENTS`` the oldest are waited for, as in PyOpenCL."""
        events = self.events
        events[:] = [e for e in events if not completed(e) and e is not event]
        events.append(event)
        if len(events) > _MAX_EVENTS:
            oldest = events[:4]
            cl.wait_for_events(oldest)
            del events[:4]

    def finish(self) -> None:
        """Wait for the array's events (raising a failure among them), as PyOpenCL does: not
        for the whole queue, where an unrelated command may wait for a user event."""
        if self.events:
            cl.wait_for_events(self.events)
            del self.events[:]

    def _queue(self, queue: cl.CommandQueue | None, routine: str) -> cl.CommandQueue:
        queue = queue or self.queue
        if queue is None:
            raise make_error(routine, "INVALID_COMMAND_QUEUE",
                             "the array has no queue: pass queue=")
        return queue

    # ------------------------------------------------------------------ host transfers

    def get(self, queue: cl.CommandQueue | None = None, ary: np.ndarray | None = None,
            async_: bool = False, **kwargs: Any) -> np.ndarray:
        self._materialize()
        queue = self._queue(queue, "Array.get")
        if ary is None:
            # in the array's own order, as PyOpenCL's: a Fortran-ordered array comes back so
            fortran = self.flags.f_contiguous and not self.flags.c_contiguous
            ary = np.empty(self.shape, self.dtype, order="F" if fortran else "C")
        elif ary.shape != self.shape or ary.dtype != self.dtype:
            raise make_error("Array.get", "INVALID_VALUE",
                             f"ary is {ary.dtype} {ary.shape}, the array {self.dtype} "
                             f"{self.shape}")
        if self.size == 0:
            return ary
        if self.flags.c_contiguous and ary.flags.c_contiguous:  # no staging copy
            record_event(cl.enqueue_copy(queue, ary, self._buffer, device_offset=self.offset,
                                         wait_for=wait_list([self]), is_blocking=True), [self])
            return ary
        low, high = span(self.shape, self.strides, self.dtype.itemsize)
        raw = np.empty(high - low, np.uint8)
        record_event(cl.enqueue_copy(queue, raw, self._buffer, device_offset=self.offset + low,
                                     wait_for=wait_list([self]), is_blocking=True), [self])
        ary[...] = np.ndarray(self.shape, self.dtype, raw, -low, self.strides)
        return ary

    def set(self, ary: Any, queue: cl.CommandQueue | None = None, async_: bool = False,
            **kwargs: Any) -> None:
        ary = np.asarray(ary)
        if ary.shape != self.shape:
            raise make_error("Array.set", "INVALID_VALUE",
                             f"ary has shape {ary.shape}, the array {self.shape}")
        if ary.dtype != self.dtype:
            raise make_error("Array.set", "INVALID_VALUE",
                             f"ary has dtype {ary.dtype}, the array {self.dtype}")
        queue = self._queue(queue, "Array.set")
        self._before_write()
        if self.flags.c_contiguous:
            if self.size:
                record_event(cl.enqueue_copy(queue, self._buffer,
                                             np.require(ary, requirements="C"),
                                             device_offset=self.offset,
                                             wait_for=wait_list([self]), is_blocking=True),
                             [self])
            return
        _assign(self, Leaf(self.dtype, _functions.to_device(queue, np.require(ary, requirements="C"))))

    def __str__(self) -> str:
        if self.queue is None:  # as PyOpenCL's: printing an array never raises
            return (f"<cl.{type(self).__name__} {self.shape} of {self.dtype} without queue, "
                    "call with_queue()>")
        return str(self.get())

    def __repr__(self) -> str:
        if self.queue is None:
            return (f"<cl.{type(self).__name__} {self.shape} of {self.dtype} at {id(self):x} "
                    "without queue, call with_queue()>")
        return repr(self.get()).replace("array(", "cl.Array(", 1)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __float__(self) -> float:
        return float(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __complex__(self) -> complex:
        return complex(self.get())

    def __bool__(self) -> bool:
        if self.size == 0:  # numpy's words: an empty array is not simply false
            raise ValueError("the truth value of an empty array is ambiguous: use "
                             "array.size > 0 to check that an array is not empty")
        if self.size != 1:
            raise ValueError("the truth value of an array with more than one element is "
                             "ambiguous: use array.any() or array.all()")
        return bool(self.get())

    # ------------------------------------------------------------------ copies and views

    def _same_class(self, *args: Any, **kwargs: Any) -> Array:
        """A new array of this array's class: PyOpenCL's results, views and copies of an
        instance of a subclass are instances of it. The subclass's own ``__init__`` is not
        called, its signature being its own; its methods and properties apply."""
        made = Array.__new__(type(self))
        Array.__init__(made, *args, **kwargs)
        return made

    def _new_like(self, dtype: Any = None, shape: Any = None) -> Array:
        return self._same_class(self.queue or self.context, self.shape if shape is None else shape,
                     self.dtype if dtype is None else dtype, allocator=self.allocator)

    def _lazy(self, expr: Node, shape: tuple[int, ...] | None = None) -> Array:
        return self._same_class(self.queue or self.context,
                                self.shape if shape is None else shape, expr.dtype,
                                allocator=self.allocator, _expr=expr)

    def _node(self) -> Node:
        if self._expr is not None:
            return self._expr
        return Leaf(self.dtype, self)

    def copy(self, queue: Any = _OWN_QUEUE) -> Array:
        """A new array of the same elements. Its queue is ``queue``, the array's own when not
        given; ``queue=None`` gives a copy without a queue, as PyOpenCL's, made on the
        array's queue."""
        result = self._new_like()
        if queue is not _OWN_QUEUE and queue is not None:
            result.queue = queue
        _assign(result, self._node())
        if queue is None:
            result.queue = None
        return result

    def astype(self, dtype: Any, queue: cl.CommandQueue | None = None) -> Array:
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self.copy() if queue is None else self.copy(queue)
        if self.dtype.kind == "c" and dtype.kind != "c":
            raise TypeError(f"astype cannot drop the imaginary part of {self.dtype}: take "
                            ".real or abs() first")
        return self._lazy(Op(dtype, "cast", (self._node(),)))

    def view(self, dtype: Any = None) -> Array:
        """The same bytes as ``dtype``. As numpy's, a dtype of another size regroups the bytes
        of the last axis, which must be contiguous (8 float32 -> 2 ``cltypes.float4``)."""
        dtype = np.dtype(dtype or self.dtype)
        shape, strides = self.shape, self.strides
        if dtype.itemsize != self.dtype.itemsize:
            shape, strides = _regrouped(shape, strides, self.dtype.itemsize, dtype.itemsize)
        base = self._concrete()
        return self._same_class(self.queue or self.context, shape, dtype, data=base._buffer,
                                offset=self.offset, strides=strides,
                                allocator=self.allocator, events=self.events)

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
        return self._same_class(self.queue or self.context, shape, self.dtype,
                                data=self._buffer, offset=offset, strides=strides,
                                allocator=self.allocator, events=self.events)

    def __getitem__(self, index: Any) -> Array:
        self._materialize()
        if isinstance(index, Array):  # a[indices], as PyOpenCL: take from a 1-d array
            return _functions.take(self, index)
        if isinstance(index, np.ndarray) and index.ndim:
            raise make_error("Array.__getitem__", "INVALID_VALUE",
                             "index with a device array of integers (ppcl.array.to_device), "
                             "not a numpy array")
        shape, strides, moved = index_view(self.shape, self.strides, self.dtype, index)
        return self._view(shape, strides, self.offset + moved)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, Array):  # a[indices] = values, as PyOpenCL
            _functions.put(self, index, value)
            return
        target = self[index]
        target._before_write()
        if isinstance(value, Array):
            if value.shape != target.shape and value.size != 1:
                raise make_error("Array.__setitem__", "INVALID_VALUE",
                                 f"cannot assign shape {value.shape} to shape {target.shape}")
            _assign(target, value._node())
        elif isinstance(value, np.ndarray) and value.ndim:
            target.set(value.astype(target.dtype, copy=False))
        else:
            _check_fill_value(value, target.dtype, "Array.__setitem__")
            _assign(target, scalar_node(value, target.dtype))

    def reshape(self, *shape: Any, order: str = "C") -> Array:
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = tuple(shape[0])
        dims = list(shape_tuple(shape, unknown=True))
        if dims.count(-1) == 1:
            known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            dims[dims.index(-1)] = self.size // known if known else 0
        new_shape = tuple(dims)
        if int(np.prod(new_shape, dtype=np.int64)) != self.size:
            raise invalid_value("Array.reshape",
                                f"cannot reshape size {self.size} into {new_shape}")
        if order not in ("C", "F"):
            raise invalid_value("Array.reshape", f"order is 'C' or 'F', not {order!r}")
        source = self._concrete()
        # a view wherever numpy's reshape gives one, so that writing the result writes the
        # array (a strided slice split along an axis); a copy where none exists, as numpy's
        strides = reshape_strides(source.shape, source.strides, source.dtype, new_shape, order)
        if strides is None:
            # a copy contiguous in the order the elements are read, which any shape views
            source = source.copy() if order == "C" else source.T.copy().T
            strides = c_strides(new_shape, self.dtype.itemsize, order)
        return source._view(new_shape, strides, source.offset)

    def squeeze(self) -> Array:
        self._materialize()
        kept = [k for k, dim in enumerate(self.shape) if dim != 1]
        return self._view(tuple(self.shape[k] for k in kept),
                          tuple(self.strides[k] for k in kept), self.offset)

    def with_queue(self, queue: cl.CommandQueue | None) -> Array:
        """The same data (a view) with another queue."""
        view = self.view()
        view.queue = queue
        return view

    def setitem(self, subscript: Any, value: Any, queue: Any = None,
                wait_for: Any = None) -> None:
        self[subscript] = value

    def ravel(self, order: str = "C") -> Array:
        """The elements in ``order`` as a contiguous 1-d array: a view of an array contiguous
        in that order, else a copy, as numpy's (a reshape may give a strided view)."""
        if order not in ("C", "F"):
            raise make_error("Array.ravel", "INVALID_VALUE",
                             f"order is 'C' or 'F', not {order!r}")
        source = self.transpose() if order == "F" else self
        if not source.flags.c_contiguous:
            source = source.copy()
        return source.reshape(self.size)

    def reverse(self, queue: cl.CommandQueue | None = None) -> Array:
        """The elements in reverse order, the array taken as 1-d (its shape kept)."""
        flipped = self.ravel()[::-1]
        return (flipped.copy() if queue is None else flipped.copy(queue)).reshape(self.shape)

    def mul_add(self, selffac: Any, other: Any, otherfac: Any,
                queue: cl.CommandQueue | None = None) -> Array:
        """``selffac * self + otherfac * other`` (lazy)."""
        return selffac * self + otherfac * other

    def get_async(self, queue: cl.CommandQueue | None = None,
                  ary: np.ndarray | None = None) -> tuple[np.ndarray, cl.Event]:
        """``(ary, event)``: the contents copied to the host once ``event`` completes."""
        self._materialize()
        queue = self._queue(queue, "Array.get_async")
        if ary is None:
            ary = np.empty(self.shape, self.dtype)
        if self.size and self.flags.c_contiguous and ary.flags.c_contiguous \
                and ary.shape == self.shape and ary.dtype == self.dtype:
            return ary, record_event(cl.enqueue_copy(queue, ary, self._buffer,
                                                     src_offset=self.offset,
                                                     wait_for=wait_list([self]),
                                                     is_blocking=False), [self])
        return self.get(queue, ary), enqueue_no_work(queue)

    def map_to_host(self, queue: cl.CommandQueue | None = None, flags: int | None = None,
                    is_blocking: bool = True, wait_for: Any = None) -> Any:
        """The array's memory as a numpy array (zero copy; unmapped when it is collected or
        with ``.base.release()``); ``(ary, event)`` when not ``is_blocking``."""
        if flags is None:
            flags = cl.map_flags.READ | cl.map_flags.WRITE
        if flags & (cl.map_flags.WRITE | cl.map_flags.WRITE_INVALIDATE_REGION):
            self._before_write()
        self._materialize()
        low, _ = span(self.shape, self.strides, self.dtype.itemsize)
        if low < 0:
            raise make_error("Array.map_to_host", "INVALID_VALUE",
                             "map_to_host maps arrays with non-negative strides")
        ary, event = cl.enqueue_map_buffer(self._queue(queue, "Array.map_to_host"),
                                           self._buffer, flags, self.offset, self.shape,
                                           self.dtype, strides=self.strides,
                                           wait_for=wait_list([self], wait_for),
                                           is_blocking=is_blocking)
        record_event(event, [self])
        return ary if is_blocking else (ary, event)

    @property
    def T(self) -> Array:  # noqa: N802 - numpy's name
        return self.transpose()

    def transpose(self, axes: Sequence[int] | None = None) -> Array:
        self._materialize()
        order = list(axes) if axes is not None else list(range(self.ndim))[::-1]
        axes_of = [int(a) % self.ndim if is_integer(a) and -self.ndim <= a < self.ndim else -1
                   for a in order]
        if sorted(axes_of) != list(range(self.ndim)):
            raise make_error("Array.transpose", "INVALID_VALUE",
                             f"axes {tuple(order)} are not a permutation of the "
                             f"{self.ndim} axes")
        order = axes_of
        return self._view(tuple(self.shape[a] for a in order),
                          tuple(self.strides[a] for a in order), self.offset)

    def fill(self, value: Any, queue: cl.CommandQueue | None = None,
             wait_for: Any = None) -> Array:
        _check_fill_value(value, self.dtype, "Array.fill")
        self._wait_for(wait_for)
        self._before_write()
        _assign(self, scalar_node(value, self.dtype))
        return self

    # ------------------------------------------------------------------ arithmetic

    def _binary(self, other: Any, op: str, reverse: bool = False) -> Array:
        made = self._binary_node(other, op, reverse)
        if made is None:
            return NotImplemented
        return self._lazy(*made)

    def _binary_node(self, other: Any, op: str, reverse: bool = False,
                     dtype_of: Any = result_dtype) -> tuple[Node, tuple[int, ...]] | None:
        """``self op other`` (``other op self`` when ``reverse``) and its shape; None when
        ``other`` is neither an array nor a scalar. ``dtype_of(op, left, right)`` types it."""
        mine = self._node()
        if isinstance(other, Array):
            if other.shape != self.shape and other.size != 1 and self.size != 1:
                raise make_error("Array", "INVALID_VALUE",
                                 f"operands of shapes {self.shape} and {other.shape}")
            _check_same_context(self, other)
            theirs = other._node()
            shape = self.shape if self.size != 1 or other.size == 1 else other.shape
        elif np.isscalar(other) or (isinstance(other, np.ndarray) and other.ndim == 0):
            theirs = scalar_node(other[()] if isinstance(other, np.ndarray) else other,
                                 self.dtype)
            shape = self.shape
        else:
            return None
        left, right = (theirs, mine) if reverse else (mine, theirs)
        dtype = dtype_of(op, left.dtype, right.dtype)
        return _bounded(Op(dtype, op, (left, right)), shape), shape

    def _inplace(self, other: Any, op: str) -> Array:
        made = self._binary_node(other, op)
        if made is None:
            return NotImplemented
        if made[1] != self.shape:  # numpy: the result must fit the array written
            raise make_error("Array", "INVALID_VALUE",
                             f"an in-place operand of shape {other.shape} does not fit "
                             f"shape {self.shape}")
        if not np.can_cast(made[0].dtype, self.dtype, casting="same_kind"):
            # numpy's rule: an int32 array /= 2 or += 1.5 would drop the fraction silently
            raise TypeError(f"cannot store the {made[0].dtype} result of the in-place {op} "
                            f"in a {self.dtype} array (numpy's same_kind casting)")
        self._before_write()
        _assign(self, made[0])
        return self

    def __add__(self, o: Any) -> Array: return self._binary(o, "+")
    def __radd__(self, o: Any) -> Array: return self._binary(o, "+", True)
    def __sub__(self, o: Any) -> Array: return self._binary(o, "-")
    def __rsub__(self, o: Any) -> Array: return self._binary(o, "-", True)
    def __mul__(self, o: Any) -> Array: return self._binary(o, "*")
    def __rmul__(self, o: Any) -> Array: return self._binary(o, "*", True)
    def __truediv__(self, o: Any) -> Array: return self._binary(o, "/")
    def __rtruediv__(self, o: Any) -> Array: return self._binary(o, "/", True)
    def __floordiv__(self, o: Any) -> Array: return self._binary(o, "//")
    def __rfloordiv__(self, o: Any) -> Array: return self._binary(o, "//", True)
    def __mod__(self, o: Any) -> Array: return self._binary(o, "%")
    def __rmod__(self, o: Any) -> Array: return self._binary(o, "%", True)
    def __pow__(self, o: Any) -> Array: return self._binary(o, "pow")
    def __rpow__(self, o: Any) -> Array: return self._binary(o, "pow", True)
    def __and__(self, o: Any) -> Array: return self._binary(o, "&")
    def __or__(self, o: Any) -> Array: return self._binary(o, "|")
    def __xor__(self, o: Any) -> Array: return self._binary(o, "^")
    def __lt__(self, o: Any) -> Array: return self._binary(o, "<")
    def __le__(self, o: Any) -> Array: return self._binary(o, "<=")
    def __gt__(self, o: Any) -> Array: return self._binary(o, ">")
    def __ge__(self, o: Any) -> Array: return self._binary(o, ">=")
    def __eq__(self, o: Any) -> Array: return self._binary(o, "==")  # type: ignore[override]
    def __ne__(self, o: Any) -> Array: return self._binary(o, "!=")  # type: ignore[override]
    def __rand__(self, o: Any) -> Array: return self._binary(o, "&", True)
    def __ror__(self, o: Any) -> Array: return self._binary(o, "|", True)
    def __rxor__(self, o: Any) -> Array: return self._binary(o, "^", True)
    def __lshift__(self, o: Any) -> Array: return self._binary(o, "<<")
    def __rlshift__(self, o: Any) -> Array: return self._binary(o, "<<", True)
    def __rshift__(self, o: Any) -> Array: return self._binary(o, ">>")
    def __rrshift__(self, o: Any) -> Array: return self._binary(o, ">>", True)
    def __iadd__(self, o: Any) -> Array: return self._inplace(o, "+")
    def __isub__(self, o: Any) -> Array: return self._inplace(o, "-")
    def __imul__(self, o: Any) -> Array: return self._inplace(o, "*")
    def __itruediv__(self, o: Any) -> Array: return self._inplace(o, "/")
    def __ifloordiv__(self, o: Any) -> Array: return self._inplace(o, "//")
    def __imod__(self, o: Any) -> Array: return self._inplace(o, "%")
    def __ipow__(self, o: Any) -> Array: return self._inplace(o, "pow")
    def __iand__(self, o: Any) -> Array: return self._inplace(o, "&")
    def __ior__(self, o: Any) -> Array: return self._inplace(o, "|")
    def __ixor__(self, o: Any) -> Array: return self._inplace(o, "^")
    def __ilshift__(self, o: Any) -> Array: return self._inplace(o, "<<")
    def __irshift__(self, o: Any) -> Array: return self._inplace(o, ">>")

    __hash__ = None  # type: ignore[assignment]

    def __neg__(self) -> Array:
        return self._lazy(Op(self.dtype, "neg", (self._node(),)))

    def __pos__(self) -> Array:
        return self

    def __invert__(self) -> Array:
        if self.dtype.kind not in "iub":
            raise TypeError(f"operator ~ takes integer arrays, not {self.dtype}")
        return self._lazy(Op(self.dtype, "invert", (self._node(),)))

    def __abs__(self) -> Array:
        dtype = np.dtype(np.float32 if self.dtype == np.complex64 else
                         np.float64 if self.dtype == np.complex128 else self.dtype)
        return self._lazy(Op(dtype, "abs", (self._node(),)))

    def _part(self, op: str) -> Array:
        dtype = np.dtype(np.float32 if self.dtype == np.complex64 else
                         np.float64 if self.dtype == np.complex128 else self.dtype)
        return self._lazy(Op(dtype, op, (self._node(),)))

    @property
    def real(self) -> Array:
        return self._part("real")

    @property
    def imag(self) -> Array:
        return self._part("imag")

    def conj(self) -> Array:
        return self._lazy(Op(self.dtype, "conj", (self._node(),)))

    conjugate = conj

    def __matmul__(self, other: Array) -> Array:
        return _functions.matmul(self, other)

    # ------------------------------------------------------------------ reductions

    def sum(self, dtype: Any = None, queue: cl.CommandQueue | None = None) -> Array:
        return _functions.sum(self, dtype, queue)

    def dot(self, other: Array, queue: cl.CommandQueue | None = None) -> Array:
        return _functions.dot(self, other, queue=queue)

    def max(self, queue: cl.CommandQueue | None = None, initial: Any = _NO_INITIAL) -> Any:
        return _functions.max(self, queue, initial)

    def min(self, queue: cl.CommandQueue | None = None, initial: Any = _NO_INITIAL) -> Any:
        return _functions.min(self, queue, initial)

    def _wait_for(self, events: Any) -> None:
        """Make the next command on the array wait for ``events`` (PyOpenCL's ``wait_for``)."""
        for event in events or ():
            self.add_event(event)

    def any(self, queue: cl.CommandQueue | None = None, wait_for: Any = None) -> Array:
        self._wait_for(wait_for)
        if self.size == 0:  # numpy's answer; max of nothing has no value
            return _filled_scalar(self, queue, 0)
        return _functions.max(self != 0, queue)

    def all(self, queue: cl.CommandQueue | None = None, wait_for: Any = None) -> Array:
        self._wait_for(wait_for)
        if self.size == 0:
            return _filled_scalar(self, queue, 1)
        return _functions.min(self != 0, queue)


def _filled_scalar(array: Array, queue: cl.CommandQueue | None, value: int) -> Array:
    """A 0-d array of the type comparisons give, holding ``value``."""
    queue = array._queue(queue, "ppcl.array")
    return Array(queue, (), np.int8, allocator=array.allocator).fill(value)


def _bounded(node: Op, shape: tuple[int, ...]) -> Node:
    """``node`` (of ``shape``), with operands past the size bound evaluated into arrays."""
    if size_of(node) <= _MAX_TREE:
        return node
    args = []
    for arg in node.args:
        if isinstance(arg, Op):
            owner = next(iter(leaves(arg)), None)
            if owner is not None:
                temp = Array(owner.queue or owner.context, shape, arg.dtype, _expr=arg)
                temp._materialize()
                arg = Leaf(arg.dtype, temp)
        args.append(arg)
    return Op(node.dtype, node.op, tuple(args))


def _cached(context: cl.Context, key: Any, make: Any) -> Any:
    per_context = _kernels.setdefault(context, {})
    found = per_context.get(key)
    if found is None:
        found = per_context[key] = make()
    return found


def _regrouped(shape: tuple[int, ...], strides: tuple[int, ...], old: int,
               new: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides of a view whose items of ``old`` bytes become items of ``new`` bytes
    along the last axis, as numpy's ``view`` regroups them."""
    if not shape:
        raise make_error("Array.view", "INVALID_VALUE",
                         "a 0-d array cannot change to a dtype of another size")
    if shape[-1] != 1 and strides[-1] != old:
        raise make_error("Array.view", "INVALID_VALUE",
                         "changing to a dtype of another size needs a contiguous last axis")
    if shape[-1] * old % new:
        raise make_error("Array.view", "INVALID_VALUE",
                         f"the last axis holds {shape[-1] * old} bytes, not a multiple of the "
                         f"new dtype's {new}")
    return shape[:-1] + (shape[-1] * old // new,), strides[:-1] + (new,)


def _check_fill_value(value: Any, dtype: np.dtype, routine: str) -> None:
    """``value`` is one number that ``dtype`` holds, as numpy's fill requires: an array of
    several failed as a kernel argument of the wrong size, and NaN or infinity became INT_MIN
    in an integer array."""
    if np.ndim(value) != 0:
        raise make_error(routine, "INVALID_VALUE",
                         f"the value has shape {np.shape(value)}: fill takes one scalar")
    if dtype.kind in "iub" and isinstance(value, float | np.floating) \
            and not np.isfinite(value):
        raise make_error(routine, "INVALID_VALUE",
                         f"cannot convert {value} to the integer dtype {dtype}")


def _check_same_context(array: Array, other: Array) -> None:
    # a kernel reads every operand: without this the error named the generated kernel's
    # argument ('x2__base' of 'ppcl_array_op') instead of the arrays
    if other.context is not array.context:
        raise make_error("Array", "INVALID_CONTEXT",
                         "the arrays belong to different contexts (their queues' contexts): "
                         "copy one over with .get() and to_device")


def _assign(target: Array, node: Node) -> None:
    """Run ``target[...] = node`` as one elementwise kernel."""
    queue = target._queue(None, "Array")
    for leaf in leaves(node):
        _check_same_context(target, leaf)
    sources = [leaf for leaf in leaves(node)
               if leaf._buffer is target._buffer and leaf is not target
               and (leaf.offset, leaf.strides, leaf.shape) !=
               (target.offset, target.strides, target.shape)]
    if sources:  # an overlapping view of the target: read it from a copy
        node = _replace_leaves(node, {id(s): s.copy() for s in sources})
    values: list[Any] = []
    layout = _layouts(node, target, values)
    per_context = _kernels.setdefault(target.context, {})
    kernel = per_context.get(layout)
    if kernel is None:  # printed once per layout; later calls only gather the values
        printed = Printed()
        out = array_access(printed, target, target.shape)
        code = convert(print_tree(node, target.shape, printed), node.dtype, target.dtype)
        operation = f"{out} = {code}"
        kernel = _cached(target.context, ("elementwise", operation, printed.key()),
                         lambda: ElementwiseKernel(target.context, printed.args, operation,
                                                   name="ppcl_array_op",
                                                   preamble=printed.preamble()))
        per_context[layout] = kernel
    arrays = [target, *leaves(node)]
    record_event(kernel.launch(queue, values, target.size, wait_for=wait_list(arrays)), arrays)


def _layouts(node: Node, target: Array, values: list[Any]) -> tuple[Any, ...]:
    """What the printed kernel of ``target[...] = node`` depends on (operators, dtypes, each
    array's shape and strides and which arrays are the same, the target's shape), gathering
    the kernel's argument values into ``values`` in the order ``print_tree`` gives them."""
    numbers: dict[int, int] = {}
    target_layout = _array_layout(target, numbers, values)
    return ("assign", target.shape, target_layout, _node_layout(node, numbers, values))


def _node_layout(n: Node, numbers: dict[int, int], values: list[Any]) -> tuple[Any, ...]:
    """``_layouts`` of one node (a module function, not a closure: a recursive closure is a
    reference cycle, which kept the arguments gathered in ``values``, buffers included,
    until the garbage collector ran)."""
    if isinstance(n, Leaf):
        return _array_layout(n.array, numbers, values)
    if isinstance(n, Scalar):
        values.append(scalar_value(n.dtype, n.value))
        return ("s", n.dtype.str)
    if isinstance(n, Op):
        return (n.op, n.dtype.str, *(_node_layout(a, numbers, values) for a in n.args))
    return ("i", n.dtype.str)


def _array_layout(a: Array, numbers: dict[int, int], values: list[Any]) -> tuple[Any, ...]:
    number = numbers.get(id(a))
    if number is None:
        number = numbers[id(a)] = len(numbers)
        values.append(a._buffer)
        values.append(np.int64(a.offset // a.dtype.itemsize))
    return ("a", number, a.dtype.str, a.shape, a.strides)


def _replace_leaves(node: Node, table: dict[int, Array]) -> Node:
    if isinstance(node, Leaf) and id(node.array) in table:
        return Leaf(node.dtype, table[id(node.array)])
    if isinstance(node, Op):
        return Op(node.dtype, node.op, tuple(_replace_leaves(a, table) for a in node.args))
    return node


def _reduction_kernel(context: cl.Context, kind: str, dtype: np.dtype, code: str,
                      printed: Printed, name: str) -> ReductionKernel:
    """The cached kernel folding ``code`` by ``kind`` (``sum``, ``max``, ``min``) in
    ``dtype``."""
    if dtype.kind == "c" and kind != "sum":
        # OpenCL's max and min of a float2 go component by component: no complex order
        raise TypeError(f"{kind} of {dtype}: complex numbers have no order")
    reduce_expr = "a + b" if kind == "sum" else extremum(kind, "a", "b", dtype)
    return _cached(context, (name, kind, dtype.str, code, printed.key()),
                   lambda: ReductionKernel(context, dtype, neutral_of(dtype, kind), reduce_expr,
                                           map_expr=code, arguments=printed.args, name=name,
                                           preamble=printed.preamble()))


def _reduce(array: Array, node: Node, kind: str, dtype: np.dtype,
            queue: cl.CommandQueue | None, count: int | None = None,
            shape: tuple[int, ...] | None = None) -> Array:
    """``node`` folded by ``kind`` into a new 0-d array: through the patterns where they
    express it (``ppcl.array_patterns``), else by a ReductionKernel."""
    queue = array._queue(queue, f"ppcl.array.{kind}")
    total = array.size if count is None else count
    if total == 0 and kind != "sum":
        # the neutral element (-inf, INT_MIN, ...) is no value of the array; numpy and
        # PyOpenCL refuse too
        raise invalid_value(f"ppcl.array.{kind}",
                            f"{kind} of an empty array: a zero-size array has no {kind}")
    route = array_patterns.plan(node, kind, dtype, total, queue) \
        if shape is None and count is None else "a reduction over another shape"
    out = Array(queue, (), dtype, allocator=array.allocator)
    read = list(leaves(node))
    if not isinstance(route, str):
        record_event(array_patterns.reduce(*route, queue, out._buffer, wait_list(read)),
                     [out, *read])
        return out
    array_patterns.report(kind, dtype, total, route)
    printed = Printed()
    code = convert(print_tree(node, shape or array.shape, printed), node.dtype, dtype)
    kernel = _reduction_kernel(array.context, kind, dtype, code, printed, "ppcl_array_reduce")
    record_event(kernel.run(queue, printed.values, total, out._buffer, 0, None, wait_list(read)),
                 [out, *read])
    return out


# the module functions the methods above call (``functions.py`` imports this module first)
from ppcl.array import functions as _functions  # noqa: E402
