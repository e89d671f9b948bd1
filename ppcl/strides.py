"""Shapes and byte strides of ``ppcl.array`` views, computed as numpy computes them.

Indexing a view runs numpy's own indexing on a stand-in array of the view's shape and strides
(no data is touched), so slices, integers, ``Ellipsis`` and ``newaxis`` give exactly numpy's
shape, strides and offset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ppcl.runtime.errors import is_integer, make_error


class Flags:
    """``c_contiguous``, ``f_contiguous`` and ``forc`` of an array, as numpy's flags."""

    def __init__(self, array: Any) -> None:
        itemsize = array.dtype.itemsize
        self.c_contiguous = contiguous(array.shape, array.strides, itemsize)
        self.f_contiguous = contiguous(array.shape[::-1], array.strides[::-1], itemsize)
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


def shape_tuple(shape: Any) -> tuple[int, ...]:
    """``shape`` (an integer or a sequence of them) as a tuple of ints; anything else, a float
    among them too (``int()`` would truncate it), is ``CL_INVALID_VALUE``."""
    dims = (shape,) if isinstance(shape, int | np.integer) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = (shape,)  # one entry that is no integer: reported below
    for dim in dims:
        if not is_integer(dim):
            raise make_error("Array", "INVALID_VALUE",
                             f"shape {shape!r}: {dim!r} ({type(dim).__name__}) is not an integer")
    return tuple(int(d) for d in dims)


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
