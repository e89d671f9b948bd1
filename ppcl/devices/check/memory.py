"""Memory of the checking device: objects with bounds, and the shadows that find bugs.

A :class:`Region` is one memory object a kernel can reach: a buffer argument (its bounds the
buffer's or sub-buffer's), a ``__local`` variable or argument (one copy per work-group of the
batch), a private array (one copy per work-item), a program-scope ``__constant``. Its bytes are a slice
of a uint8 array; pointers are (region, byte offset) pairs, so every access is checked against
the object the pointer was derived from, not just against some valid memory.

``__local`` and private objects carry an *initialized* bit per byte (reads of bytes nobody
wrote are reported). ``__local`` and ``__global`` objects carry a :class:`Shadow`: per element
the last writer and reader work-item, their barrier epoch and source location, from which
conflicting accesses of one barrier interval (or of different work-groups) are races.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

NONE = -1  # no work-item
MANY = -2  # several work-items read it


class Shadow:
    """Per element of ``granule`` bytes: who wrote and read it last, when, and where."""

    def __init__(self, nbytes: int, granule: int) -> None:
        words = nbytes // granule + 1
        self.granule = granule
        self.w_item = np.full(words, NONE, np.int64)
        self.w_epoch = np.zeros(words, np.int64)
        self.w_loc = np.zeros(words, np.int32)
        self.r_item = np.full(words, NONE, np.int64)
        self.r_epoch = np.zeros(words, np.int64)
        self.r_loc = np.zeros(words, np.int32)


EPOCH_BITS = 24  # an epoch is group * 2**24 + barrier interval


@dataclass
class Conflict:
    """A race found on an access: the position of the lane among those checked, the other
    work-item (global linear id, or MANY) and the other access's location id."""

    position: int
    other_item: int
    other_loc: int
    other_wrote: bool


def check_and_record(shadow: Shadow, words: np.ndarray, items: np.ndarray,
                     epochs: np.ndarray, loc_id: int, write: bool,
                     keys: np.ndarray | None = None,
                     unchanged: np.ndarray | None = None) -> Conflict | None:
    """Record accesses of ``words`` by work-items ``items`` (global linear ids) in barrier
    epochs ``epochs``, and return the first race with an earlier access, if any.

    Two accesses conflict when different work-items make them, one writes, and they are in
    the same barrier interval of one group or in different groups (no barrier orders those).
    As in Oclgrind, two writes of the same value are not reported: ``keys`` identify the
    values written, ``unchanged`` says where a write stores the value already there.
    """
    conflict: Conflict | None = None
    groups = epochs >> EPOCH_BITS
    prev = shadow.w_item[words]
    prev_epoch = shadow.w_epoch[words]
    clash = (prev >= 0) & (prev != items) & \
        ((prev_epoch == epochs) | ((prev_epoch >> EPOCH_BITS) != groups))
    if write and unchanged is not None:
        clash &= ~unchanged
    if clash.any():
        k = int(np.argmax(clash))
        conflict = Conflict(k, int(prev[k]), int(shadow.w_loc[words[k]]), True)
    if write:
        readers = shadow.r_item[words]
        r_epoch = shadow.r_epoch[words]
        live = (readers != NONE) & ((r_epoch == epochs) | ((r_epoch >> EPOCH_BITS) != groups))
        clash = live & (readers != items)
        if conflict is None and clash.any():
            k = int(np.argmax(clash))
            conflict = Conflict(k, int(readers[k]), int(shadow.r_loc[words[k]]), False)
        if conflict is None and len(words) > 1:
            conflict = _same_statement_writes(shadow, words, items, keys)
        shadow.w_item[words] = items
        shadow.w_epoch[words] = epochs
        shadow.w_loc[words] = loc_id
        shadow.r_item[words] = NONE
        return conflict
    readers = shadow.r_item[words]
    r_epoch = shadow.r_epoch[words]
    stale = (readers == NONE) | (readers == items) | \
        ((r_epoch != epochs) & ((r_epoch >> EPOCH_BITS) == groups))
    candidate = np.where(stale, items, MANY)
    shadow.r_item[words] = candidate
    last = shadow.r_item[words]
    shadow.r_item[words[::-1]] = candidate[::-1]
    first = shadow.r_item[words]
    if (first != last).any():
        shadow.r_item[words] = np.where(first != last, MANY, last)
    shadow.r_epoch[words] = epochs
    shadow.r_loc[words] = loc_id
    return conflict


def _same_statement_writes(shadow: Shadow, words: np.ndarray, items: np.ndarray,
                           keys: np.ndarray | None) -> Conflict | None:
    """Two lanes of one store writing different values to the same element: the first."""
    order = np.argsort(words, kind="stable")
    sorted_words = words[order]
    same = sorted_words[1:] == sorted_words[:-1]
    if not same.any():
        return None
    differ = same & (items[order][1:] != items[order][:-1])
    if keys is not None:
        differ &= keys[order][1:] != keys[order][:-1]
    if not differ.any():
        return None
    j = int(np.argmax(differ))
    return Conflict(int(order[j + 1]), int(items[order[j]]), -1, True)


class Region:
    """One memory object (see the module docstring). ``data`` is the uint8 array holding it
    (for buffers, the whole allocation), the object starting at byte ``base``; ``size`` is
    its extent in bytes. An object with a copy per work-item or per work-group has
    ``copies``: per lane, the number of the copy it sees, the copies ``size`` bytes apart."""

    def __init__(self, name: str, space: str, data: np.ndarray, base: int, size: int,
                 element_size: int, copies: np.ndarray | None = None,
                 track_init: bool = False, shadow: Shadow | None = None,
                 owner: Any = None) -> None:
        self.name = name
        self.space = space  # "global", "constant", "local", "private"
        self.data = data
        self.base = base
        self.size = size
        self.element_size = max(1, element_size)
        self.copies = copies
        self.init = np.zeros(len(data), np.bool_) if track_init else None
        self.shadow = shadow
        self.owner = owner
        self._views: dict[np.dtype, np.ndarray] = {}

    def typed(self, dtype: np.dtype) -> np.ndarray:
        view = self._views.get(dtype)
        if view is None:
            usable = len(self.data) // dtype.itemsize * dtype.itemsize
            view = self.data[:usable].view(dtype)
            self._views[dtype] = view
        return view

    def physical(self, lanes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Byte positions in ``data`` of the lanes' offsets."""
        if self.copies is not None:
            return self.base + self.copies[lanes] * self.size + offsets
        return self.base + offsets

    def offset_of(self, lane: int, position: int) -> int:
        """The offset into the lane's copy of the object of byte ``position`` of ``data``."""
        copy = int(self.copies[lane]) * self.size if self.copies is not None else 0
        return position - self.base - copy

    def describe(self) -> str:
        spaces = {"global": "__global buffer", "constant": "__constant buffer",
                  "local": "__local array", "private": "private array"}
        return f"{spaces.get(self.space, self.space)} '{self.name}'"


def gather(region: Region, phys: np.ndarray, dtype: np.dtype, count: int) -> np.ndarray:
    """``count`` consecutive values of ``dtype`` at each byte position (shape ``(k,)`` for 1,
    else ``(k, count)``)."""
    size = dtype.itemsize
    if not len(phys):
        return np.zeros((0,) if count == 1 else (0, count), dtype)
    if (phys % size == 0).all():
        view = region.typed(dtype)
        index = phys // size
        if count == 1:
            return view[index]
        return view[index[:, None] + np.arange(count)]
    raw = region.data[phys[:, None] + np.arange(size * count)]
    values = np.ascontiguousarray(raw).view(dtype)
    return values.reshape(len(phys)) if count == 1 else values.reshape(len(phys), count)


def scatter(region: Region, phys: np.ndarray, values: np.ndarray) -> None:
    """Store ``values`` (``(k,)`` or ``(k, count)``) at the byte positions, in lane order."""
    dtype = values.dtype
    size = dtype.itemsize
    if not len(phys):
        return
    count = 1 if values.ndim == 1 else values.shape[1]
    if (phys % size == 0).all():
        view = region.typed(dtype)
        index = phys // size
        if count == 1:
            view[index] = values
        else:
            view[index[:, None] + np.arange(count)] = values
        return
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(len(phys), size * count)
    region.data[phys[:, None] + np.arange(size * count)] = raw


def gather_bytes(region: Region, phys: np.ndarray, nbytes: int) -> np.ndarray:
    return region.data[phys[:, None] + np.arange(nbytes)]


def scatter_bytes(region: Region, phys: np.ndarray, raw: np.ndarray) -> None:
    region.data[phys[:, None] + np.arange(raw.shape[1])] = raw


def byte_span(phys: np.ndarray, nbytes: int) -> np.ndarray:
    """Every byte position an access of ``nbytes`` at each position covers, flattened."""
    if nbytes == 1:
        return phys
    return (phys[:, None] + np.arange(nbytes)).ravel()


def word_span(phys: np.ndarray, nbytes: int, granule: int) -> tuple[np.ndarray, np.ndarray]:
    """The shadow elements an access covers, and for each the position of its access."""
    first = phys // granule
    count = (nbytes + granule - 1) // granule
    if count == 1 and nbytes <= granule:
        last = (phys + nbytes - 1) // granule
        if (last == first).all():
            return first, np.arange(len(phys))
        count = 2
    else:
        count += 1
    words = first[:, None] + np.arange(count)
    last = ((phys + nbytes - 1) // granule)[:, None]
    keep = words <= last
    positions = np.broadcast_to(np.arange(len(phys))[:, None], words.shape)
    return words[keep], positions[keep]
