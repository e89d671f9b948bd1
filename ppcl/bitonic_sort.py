"""``pyopencl.bitonic_sort``: ``BitonicSort(context)`` sorts an array in place along one axis
whose length is a power of two, carrying an index array along if given.

A bitonic sorting network: for each merge width ``k`` (2, 4, ... the length) and each
distance ``j`` (``k/2`` down to 1), one elementwise launch in which every work-item compares
one pair of entries ``j`` apart and swaps them when out of the order of its ``k``-block
(ascending where the lower index has bit ``k`` clear). Every line along the axis is sorted
by the same launches: a work-item's pair index names the line and the pair in it. The
network is not stable: equal keys may come out in either order, as in PyOpenCL.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import ppcl as cl
from ppcl.array import Array, _cached
from ppcl.elementwise import ElementwiseKernel, wait_list
from ppcl.runtime.errors import make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.tools import dtype_to_ctype

_ROUTINE = "BitonicSort"


def _compare_and_swap(context: cl.Context, key_dtype: np.dtype,
                      idx_dtype: np.dtype | None) -> ElementwiseKernel:
    """The kernel of one network stage over keys of ``key_dtype`` (and indices of
    ``idx_dtype``), for lines of ``length`` entries ``inner`` entries apart."""
    key_t = dtype_to_ctype(key_dtype)
    arguments = f"__global {key_t} *arr"
    swap_idx = ""
    if idx_dtype is not None:
        idx_t = dtype_to_ctype(idx_dtype)
        arguments += f", __global {idx_t} *idx"
        swap_idx = f"{idx_t} t = idx[lo]; idx[lo] = idx[hi]; idx[hi] = t;"
    arguments += ", long length, long inner, long k, long j"
    operation = f"""
      long pair = i;
      long col = pair % inner; pair /= inner;
      long within = pair % (length / 2), line = pair / (length / 2);
      long first = (within / j) * 2 * j + within % j;
      long lo = (line * length + first) * inner + col, hi = lo + j * inner;
      {key_t} a = arr[lo], b = arr[hi];
      if ((first & k) == 0 ? b < a : a < b) {{
        arr[lo] = b; arr[hi] = a;
        {swap_idx}
      }}"""
    key = ("bitonic_sort", key_dtype.str, None if idx_dtype is None else idx_dtype.str)
    return _cached(context, key, lambda: ElementwiseKernel(
        context, arguments, operation, name="ppcl_bitonic_step"))


class BitonicSort:
    """``pyopencl.bitonic_sort.BitonicSort(context)``; ``sorter(arr, idx=None, queue=None,
    wait_for=None, axis=0)`` sorts ``arr`` in place along ``axis`` (its length a power of
    two), permutes ``idx`` (of ``arr``'s shape) the same way, and returns ``(arr, event)``."""

    def __init__(self, context: cl.Context) -> None:
        self.context = context

    def __call__(self, arr: Array, idx: Array | None = None,
                 queue: cl.CommandQueue | None = None,
                 wait_for: Sequence[cl.Event] | None = None,
                 axis: int = 0) -> tuple[Array, cl.Event]:
        if not isinstance(arr, Array):
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             f"arr must be a ppcl array, not {type(arr).__name__}")
        if arr.dtype.kind not in "iuf":
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             f"sorts integer and floating-point keys, not {arr.dtype}")
        if idx is not None and (not isinstance(idx, Array) or idx.shape != arr.shape
                                or idx.dtype.kind not in "iu"):
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             f"idx must be an integer ppcl array of arr's shape {arr.shape}")
        if not all(a.flags.c_contiguous for a in (arr, idx) if a is not None):
            # lines are found from the shape by C order: another layout would mix them
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             "sorts C-contiguous arrays only: copy a view first (.copy())")
        if not -arr.ndim <= axis < arr.ndim:
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             f"axis {axis} is out of range for {arr.ndim} dimensions")
        axis %= arr.ndim
        queue = arr._queue(queue, _ROUTINE)
        length = arr.shape[axis]
        if length & (length - 1):
            raise make_error(_ROUTINE, "INVALID_VALUE",
                             f"the sorted axis must have a power-of-two length, not {length}")
        arrays = [arr] if idx is None else [arr, idx]
        if length < 2 or arr.size == 0:
            return arr, enqueue_no_work(queue, wait_list(arrays, wait_for))
        kernel = _compare_and_swap(self.context, arr.dtype,
                                   None if idx is None else idx.dtype)
        inner = int(np.prod(arr.shape[axis + 1:], dtype=np.int64))
        pairs = slice(0, arr.size // 2)
        event = None
        k = 2
        while k <= length:
            j = k // 2
            while j:
                # each launch waits for the one before through the arrays' events
                event = kernel(*arrays, np.int64(length), np.int64(inner), np.int64(k),
                               np.int64(j), range=pairs, queue=queue,
                               wait_for=wait_for if event is None else None)
                j //= 2
            k *= 2
        assert event is not None
        return arr, event


__all__ = ["BitonicSort"]
