"""Values of the checking device: one numpy row per work-item ("lane").

A scalar of an arithmetic type is an array of shape ``(lanes,)`` of the type's numpy dtype; a
vector is ``(lanes, width)``; a struct or union is its bytes, ``(lanes, size)`` of uint8; a
pointer is a :class:`Ptr` (the memory object and the byte offset, per lane). Conversions and
operators follow OpenCL C: integers wrap, division truncates, shifts use the low bits of the
count (OpenCL C 1.2, 6.3 j), float arithmetic stays in float.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ppcl.compiler.ir.types import (
    EnumType,
    OpaqueType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    scalar_of,
)

DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_), "char": np.dtype(np.int8), "uchar": np.dtype(np.uint8),
    "short": np.dtype(np.int16), "ushort": np.dtype(np.uint16), "int": np.dtype(np.int32),
    "uint": np.dtype(np.uint32), "long": np.dtype(np.int64), "ulong": np.dtype(np.uint64),
    "half": np.dtype(np.float16), "float": np.dtype(np.float32), "double": np.dtype(np.float64),
}


class Unsupported(Exception):
    """A construct the checking device does not interpret; the message names it."""


@dataclass
class Ptr:
    """A pointer per lane: ``region`` indexes the launch's memory objects (one int when every
    lane points into the same object, else an array; -1 is NULL), ``offset`` is in bytes."""

    region: Any  # int or np.ndarray of int
    offset: np.ndarray  # int64

    def take(self, lanes: np.ndarray) -> Ptr:
        region = self.region if isinstance(self.region, int) else self.region[lanes]
        return Ptr(region, self.offset[lanes])


def dtype_of(t: Type) -> np.dtype:
    """The numpy dtype of a scalar or vector type's components (``event_t``: a 64-bit id)."""
    if isinstance(t, OpaqueType):
        return np.dtype(np.uint64)
    elem = scalar_of(t)
    if elem is None:
        raise Unsupported(f"values of type '{t}'")
    return DTYPES[elem.name]


def zeros(t: Type, lanes: int) -> Any:
    """The value of type ``t`` with every lane zero (NULL for pointers)."""
    if isinstance(t, PointerType):
        return Ptr(-1, np.zeros(lanes, np.int64))
    if isinstance(t, StructType):
        return np.zeros((lanes, t.size), np.uint8)
    if isinstance(t, VectorType):
        return np.zeros((lanes, t.width), dtype_of(t))
    if isinstance(t, (ScalarType, EnumType, OpaqueType)):
        return np.zeros(lanes, dtype_of(t))
    raise Unsupported(f"values of type '{t}'")


def from_bytes(t: Type, data: bytes, lanes: int) -> Any:
    """A kernel argument passed by value, the same in every lane."""
    if isinstance(t, StructType):
        return np.broadcast_to(np.frombuffer(data, np.uint8), (lanes, len(data))).copy()
    if isinstance(t, VectorType):
        row = np.frombuffer(data, dtype_of(t))[:t.width]
        return np.broadcast_to(row, (lanes, t.width)).copy()
    if isinstance(t, (ScalarType, EnumType)):
        return np.full(lanes, np.frombuffer(data, dtype_of(t))[0])
    raise Unsupported(f"a kernel argument of type '{t}' passed by value")


def convert(value: np.ndarray, source: Type, target: Type) -> np.ndarray:
    """C's conversion of an arithmetic value (a scalar widens to every component of a vector)."""
    dtype = dtype_of(target)
    if isinstance(target, ScalarType) and target.is_bool:
        out = value != 0
        return out if out.ndim == 1 else out.any(axis=1)
    src = scalar_of(source)
    if src is not None and src.is_float and dtype.kind in "iu":
        value = float_to_int(value, dtype)
    else:
        with np.errstate(all="ignore"):
            value = value.astype(dtype)
    if isinstance(target, VectorType) and value.ndim == 1:
        value = np.repeat(value[:, None], target.width, axis=1)
    return value


def float_to_int(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float to integer rounding toward zero; NaN and values out of range (undefined in C)
    become 0 or the nearest limit rather than numpy's platform-dependent result."""
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        clipped = np.clip(np.nan_to_num(value.astype(np.float64), nan=0.0), info.min, info.max)
        truncated = np.trunc(clipped)
        if dtype.itemsize == 8:  # float64 cannot hold every 64-bit limit exactly
            big = truncated >= float(info.max)
            out = truncated.astype(dtype)
            out[big] = info.max
            return out
        return truncated.astype(dtype)


def truth(value: Any) -> np.ndarray:
    """Per lane, whether a scalar or pointer is non-zero (C's condition)."""
    if isinstance(value, Ptr):
        return np.asarray(value.region) >= 0 if isinstance(value.region, np.ndarray) \
            else np.full(len(value.offset), value.region >= 0)
    return value != 0


def vector_truth(result: np.ndarray, t: Type) -> np.ndarray:
    """A comparison's result as OpenCL C gives it: 1/0 for scalars, -1/0 for vectors."""
    dtype = dtype_of(t)
    if isinstance(t, VectorType):
        return np.where(result, -1, 0).astype(dtype)
    return result.astype(dtype)


def is_integer(t: Type) -> bool:
    elem = scalar_of(t)
    return elem is not None and elem.is_integer


def bits_of(t: Type) -> int:
    return dtype_of(t).itemsize * 8


def int_divide(a: np.ndarray, b: np.ndarray, remainder: bool) -> np.ndarray:
    """C's truncating division (or remainder) of integers; the caller has made every divisor
    non-zero. ``INT_MIN / -1`` wraps (OpenCL leaves it unspecified)."""
    with np.errstate(all="ignore"):
        q = a // b
        r = a - q * b
        fix = (r != 0) & ((a < 0) != (b < 0))
        if a.dtype.kind == "i":
            q = np.where(fix, q + 1, q)
            r = np.where(fix, r - b, r)
        return (r if remainder else q).astype(a.dtype)


def shift_count(b: np.ndarray, t: Type) -> np.ndarray:
    """The count of a shift: its low log2(bits) bits, as OpenCL C defines (6.3 j)."""
    return (b.astype(np.int64) & (bits_of(t) - 1)).astype(dtype_of(t))


def lane_count(value: Any) -> int:
    return len(value.offset) if isinstance(value, Ptr) else len(value)


def broadcast(value: Any, lanes: int) -> Any:
    """A value of one lane (a constant) for ``lanes`` lanes."""
    if isinstance(value, Ptr):
        return Ptr(value.region, np.broadcast_to(value.offset, (lanes,)).copy())
    return np.broadcast_to(value, (lanes,) + value.shape[1:]).copy()


def select(mask: np.ndarray, new: Any, old: Any) -> Any:
    """Per lane, ``new`` where ``mask`` holds, else ``old`` (a masked assignment)."""
    if isinstance(new, Ptr):
        old_region = old.region if isinstance(old, Ptr) else -1
        old_offset = old.offset if isinstance(old, Ptr) else np.zeros_like(new.offset)
        if isinstance(new.region, int) and isinstance(old_region, int) and new.region == old_region:
            region: Any = new.region
        else:
            region = np.where(mask, new.region, old_region)
        return Ptr(region, np.where(mask, new.offset, old_offset))
    if new.ndim == 2 and mask.ndim == 1:
        return np.where(mask[:, None], new, old)
    return np.where(mask, new, old)
