"""Shapes and byte strides of ``ppcl.array`` views, computed as numpy computes them.

Indexing a view runs numpy's own indexing on a stand-in array of the view's shape and strides
(no data is touched), so slices, integers, ``Ellipsis`` and ``newaxis`` give exactly numpy's
shape, strides and offset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ppcl.runtime.errors import invalid_value, is_integer, make_error


class Flags:
    """``c_contiguous``, ``f_contiguous`` and ``forc`` of an array, as numpy's flags."""

    def __init__(self, array: Any) -> None:
        itemsize = array.dtype.itemsize
        # an array with no elements is both, whatever its strides, as in numpy
        empty = 0 in array.shape
        self.c_contiguous = empty or contiguous(array.shape, array.strides, itemsize)
        self.f_contiguous = empty or contiguous(array.shape[::-1], array.strides[::-1],
                                                itemsize)
        self.forc = self.c_contiguous or self.f_contiguous


def contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def c_strides(shape: tuple[int, ...], itemsize: int, order: str = "C") -> tuple[int, ...]:
    strides = []
    step = itemsize
    dims = shape if order == "F" else shape[::-1]
    for dim in dims:
        strides.append(step)
        step *= dim
    return tuple(strides) if order == "F" else tuple(reversed(strides))


def shape_tuple(shape: Any, unknown: bool = False) -> tuple[int, ...]:
    """``shape`` (an integer or a sequence of them) as a tuple of ints; anything else, a float
    among them too (``int()`` would truncate it), or a negative dimension is
    ``CL_INVALID_VALUE``, a ``ValueError`` as numpy's. With ``unknown`` (a reshape's new
    shape), one dimension may be -1, to be inferred."""
    dims = (shape,) if isinstance(shape, int | np.integer) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = (shape,)  # one entry that is no integer: reported below
    for dim in dims:
        if not is_integer(dim):
            raise invalid_value("Array", f"shape {shape!r}: {dim!r} ({type(dim).__name__}) "
                                "is not an integer")
    result = tuple(int(d) for d in dims)
    inferred = result.count(-1) if unknown else 0
    if inferred > 1:
        raise invalid_value("Array.reshape", f"shape {shape!r}: only one dimension can be -1")
    if any(d < 0 for d in result) and not (inferred and min(result) == -1):
        raise invalid_value("Array", f"shape {shape!r}: negative dimensions are not allowed")
    return result


def reshape_strides(shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype,
                    new_shape: tuple[int, ...], order: str) -> tuple[int, ...] | None:
    """The strides of a view of ``new_shape`` over the elements of a view of ``shape`` and
    ``strides``, read in ``order``, as numpy's reshape finds them (no data is touched); None
    when no such view exists (numpy then copies)."""
    model = as_strided(np.zeros(1, dtype), shape, strides, writeable=False)
    try:
        reshaped = np.reshape(model, new_shape, order=order, copy=False)  # type: ignore[call-overload]
    except ValueError:
        return None
    except TypeError:
        # numpy before 2.1 has no copy=: assigning a view's shape never copies (order F is
        # order C over the reversed axes)
        flip = order == "F"
        reshaped = (model.T if flip else model).view()
        try:
            reshaped.shape = new_shape[::-1] if flip else new_shape
        except AttributeError:
            return None
        return tuple(reshaped.strides[::-1] if flip else reshaped.strides)
    return tuple(reshaped.strides)


def span(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """The first and one-past-last byte a view touches, relative to its offset."""
    low = high = 0
    for dim, stride in zip(shape, strides):
        if dim == 0:
            return 0, 0
        reach = (dim - 1) * stride
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    return low, high + itemsize


def index_view(shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype,
               index: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, byte offset moved) of ``view[index]`` for basic indexing."""
    model = as_strided(np.zeros(1, dtype), shape, strides, writeable=False)
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if not (isinstance(part, slice) or part is None or part is Ellipsis or is_integer(part)):
            # numpy takes a bool or an array as an advanced index and returns a copy, whose
            # address says nothing of a view's offset
            raise make_error("Array.__getitem__", "INVALID_VALUE",
                             f"index {index!r}: a ppcl array takes integers, slices, None and "
                             f"Ellipsis, not {type(part).__name__} (use take for index arrays)")
    if not any(part is Ellipsis for part in parts):
        parts = (*parts, Ellipsis)  # a full integer index then still gives a (0-d) view
    picked = model[parts]
    moved = picked.__array_interface__["data"][0] - model.__array_interface__["data"][0]
    return picked.shape, picked.strides, moved
