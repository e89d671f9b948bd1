"""Memory accesses of the checking device, each checked: the part of the interpreter that
loads and stores through pointers (``interp.py`` holds statements and expressions).

Every access goes through ``_checked`` (NULL and dangling pointers, released buffers, bounds
of the object the pointer came from, alignment) and ``_track`` (initialization of
``__local`` and private bytes, the race shadows of ``__local`` and ``__global`` memory);
findings name the lane's work-item through ``report``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType, StructType, Type, VectorType
from ppcl.devices.check import memory as mem
from ppcl.devices.check import values as val
from ppcl.devices.check.findings import Finding, FindingLog
from ppcl.devices.check.lanes import Lanes
from ppcl.devices.check.values import Ptr, Unsupported


class MemoryAccess:
    """Checked loads, stores and atomics over the launch's memory objects (``regions``)."""

    def __init__(self, kernel: ir.Function, log: FindingLog,
                 regions: list[mem.Region | None]) -> None:
        self.kernel = kernel
        self.log = log
        self.regions = regions
        self.loc_ids: dict[Loc, int] = {}
        self.locs: list[Loc] = [kernel.loc]
        self.lanes: Lanes
        self.epochs = np.zeros(0, np.int64)  # per lane: its group << EPOCH_BITS
        self.intervals = np.zeros(0, np.int64)  # per lane: barriers its group passed
        self.found = False

    def loc_id(self, loc: Loc) -> int:
        known = self.loc_ids.get(loc)
        if known is None:
            known = len(self.locs)
            self.locs.append(loc)
            self.loc_ids[loc] = known
        return known

    def report(self, kind: str, loc: Loc, lane: int, message: str, **details: Any) -> None:
        global_id, local_id, group_id = self.lanes.ids(lane)
        self.log.add(Finding(kind, loc, self.kernel.name, message, global_id, local_id,
                             group_id, **details))
        self.found = True

    def store_zero(self, ptr: Ptr, t: Type, mask: np.ndarray) -> None:
        raw = np.zeros((len(mask), t.size), np.uint8)
        self.store_raw(ptr, t.size, raw, mask, None)

    def add_region(self, region: mem.Region) -> int:
        self.regions.append(region)
        return len(self.regions) - 1

    def atomic(self, ptr: Ptr, t: Type, op: str, operands: list[Any], mask: np.ndarray,
               loc: Loc) -> np.ndarray:
        """An atomic operation by the lanes of ``mask``, in lane order; returns old values."""
        from ppcl.devices.check.builtins import atomic_apply

        dtype = val.dtype_of(t)
        size = dtype.itemsize
        out = np.zeros(len(mask), dtype)
        for region, sel, phys in self._checked(ptr, size, size, mask, loc, True):
            if region.init is not None:
                self._track_init_only(region, sel, phys, size, loc)
            view = region.typed(dtype)
            index = phys // size
            if op in ("add", "sub", "inc", "dec"):
                step = operands[0][sel].astype(dtype) if op in ("add", "sub") else \
                    np.ones(len(sel), dtype)
                if op in ("sub", "dec"):
                    with np.errstate(all="ignore"):
                        step = (np.zeros_like(step) - step).astype(dtype)
                order = np.argsort(index, kind="stable")
                sorted_index = index[order]
                with np.errstate(all="ignore"):
                    running = np.cumsum(step[order], dtype=dtype)
                    starts = np.r_[True, sorted_index[1:] != sorted_index[:-1]]
                    group_start = np.maximum.accumulate(
                        np.where(starts, np.arange(len(order)), 0))
                    before = running - step[order]
                    base_before = np.where(group_start > 0, running[group_start - 1], 0)
                    prefix = (before - base_before).astype(dtype)
                    old_sorted = view[sorted_index] + prefix
                    old = np.empty_like(old_sorted)
                    old[order] = old_sorted
                    out[sel] = old
                    np.add.at(view, index, step)
                continue
            for k, lane in enumerate(sel):
                i = int(index[k])
                old_value = view[i]
                out[lane] = old_value
                view[i] = atomic_apply(op, old_value, [o[lane] for o in operands])
        return out

    def _track_init_only(self, region: mem.Region, sel: np.ndarray, phys: np.ndarray,
                         nbytes: int, loc: Loc) -> None:
        shadow, region.shadow = region.shadow, None
        try:
            self._track(region, sel, phys, nbytes, loc, False)
            region.init[mem.byte_span(phys, nbytes)] = True  # type: ignore[index]
        finally:
            region.shadow = shadow

    # ------------------------------------------------------------------ expressions

    def _regions_of(self, ptr: Ptr, lanes: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The region ids the lanes point into, each with the positions (in ``lanes``) of
        the lanes pointing into it."""
        if isinstance(ptr.region, int):
            return [(ptr.region, np.arange(len(lanes)))]
        regions = ptr.region[lanes]
        return [(int(r), np.nonzero(regions == r)[0]) for r in np.unique(regions)]

    def _checked(self, ptr: Ptr, nbytes: int, access_size: int, mask: np.ndarray, loc: Loc,
                 write: bool, align: int = 1
                 ) -> list[tuple[mem.Region, np.ndarray, np.ndarray]]:
        """Bounds, alignment (to ``align`` bytes), released memory and NULL checks of an
        access of ``nbytes`` at ``ptr`` by the lanes of ``mask``: for each region, its lanes
        in bounds and their byte positions."""
        lanes = self.lanes.index if mask is self.lanes.all else np.nonzero(mask)[0]
        out = []
        what = "write" if write else "read"
        for rid, positions in self._regions_of(ptr, lanes):
            sel = lanes[positions] if len(positions) != len(lanes) else lanes
            offsets = ptr.offset[sel]
            region = self.regions[rid] if rid >= 0 else None
            if region is None:
                self.report("out-of-bounds", loc, int(sel[0]),
                            f"{what} through a NULL or dangling pointer")
                continue
            if region.owner is not None and getattr(region.owner, "released", False):
                self.report("released-memory", loc, int(sel[0]),
                            f"{what} of {region.describe()}, a memory object released before "
                            "the kernel ran", name=region.name)
                continue
            bad = (offsets < 0) | (offsets + nbytes > region.size)
            if bad.any():
                k = int(np.argmax(bad))
                element = access_size if access_size else nbytes
                self.report("out-of-bounds", loc, int(sel[k]),
                            f"{what} of {element} bytes at element "
                            f"{int(offsets[k]) // element} of {region.describe()}, which has "
                            f"{region.size // element} elements of {element} bytes",
                            name=region.name, index=int(offsets[k]) // element,
                            element_size=element, bound=region.size // element)
                keep = ~bad
                sel, offsets = sel[keep], offsets[keep]
                if not len(sel):
                    continue
            if align > 1:
                self._check_alignment(region, sel, offsets, align, loc, what)
            out.append((region, sel, region.physical(sel, offsets)))
        return out

    def _check_alignment(self, region: mem.Region, sel: np.ndarray, offsets: np.ndarray,
                         align: int, loc: Loc, what: str) -> None:
        """Objects start aligned (buffers to 128 bytes), so an access is aligned when its
        offset into the object is a multiple of ``align`` (the accessed type's size)."""
        start = offsets if region.copies is not None else offsets + region.base
        misaligned = start % align != 0
        if misaligned.any():
            k = int(np.argmax(misaligned))
            self.report("misaligned-access", loc, int(sel[k]),
                        f"{what} of {align} bytes at byte {int(offsets[k])} of "
                        f"{region.describe()}, which is not a multiple of {align}",
                        name=region.name, index=int(offsets[k]), element_size=align,
                        bound=region.size)

    def _track(self, region: mem.Region, sel: np.ndarray, phys: np.ndarray, nbytes: int,
               loc: Loc, write: bool, written: np.ndarray | None = None,
               significant: np.ndarray | None = None) -> None:
        """Initialization and race bookkeeping of an access; ``significant`` marks the bytes of
        a whole struct's fields (not its padding). A struct copied whole reads uninitialized
        memory only when none of its fields was written: C copies a struct with a member no
        one set without fault (C11 6.2.6.1: a struct's value is never a trap representation),
        as ``s = init(); s.x = v;`` or PyOpenCL's reductions over a struct with a pad field
        do; reading the unset member itself is still reported."""
        if region.init is not None:
            span = mem.byte_span(phys, nbytes)
            if write:
                region.init[span] = True
            else:
                ok = region.init[span]
                if significant is not None:
                    fields = significant.any()
                    written = (ok.reshape(len(phys), nbytes) & significant).any(axis=1)
                    ok = np.repeat(written | ~fields, nbytes)
                if not ok.all():
                    per_lane = ok.reshape(len(phys), -1).all(axis=1) if nbytes > 1 else ok
                    k = int(np.argmin(per_lane))
                    offset = region.offset_of(int(sel[k]), int(phys[k]))
                    self.report("uninitialized-read", loc, int(sel[k]),
                                f"read of {region.describe()} at byte {offset}, which no "
                                "work-item has written", name=region.name,
                                index=offset // region.element_size,
                                element_size=region.element_size,
                                bound=region.size // region.element_size)
        shadow = region.shadow
        if shadow is None:
            return
        words, positions = mem.word_span(phys, nbytes, shadow.granule)
        sel_w = sel[positions]
        items = self.lanes.linear[sel_w]
        epochs = self.epochs[sel_w] + self.intervals[sel_w]
        keys = unchanged = None
        if written is not None:
            old = mem.gather(region, phys, written.dtype,
                             1 if written.ndim == 1 else written.shape[1])
            same = old == written
            if same.ndim == 2:
                same = same.all(axis=1)
            keys, unchanged = _value_keys(written)[positions], same[positions]
        conflict = mem.check_and_record(shadow, words, items, epochs, self.loc_id(loc), write,
                                        keys, unchanged)
        if conflict is None:
            return
        lane = int(sel_w[conflict.position])
        other_loc = self.locs[conflict.other_loc] if conflict.other_loc >= 0 else loc
        other = "several work-items" if conflict.other_item == mem.MANY else \
            f"work-item {self.lanes.global_of_linear(conflict.other_item)}"
        kinds = ("write", "write" if conflict.other_wrote else "read") if write else \
            ("read", "write")
        element = region.offset_of(lane, int(words[conflict.position]) * shadow.granule)
        self.report("data-race", loc, lane,
                    f"{kinds[0]} of {region.describe()} (element "
                    f"{element // region.element_size}) races with a {kinds[1]} by {other} "
                    f"at {other_loc} in the same barrier interval",
                    name=region.name, index=element // region.element_size,
                    element_size=region.element_size, other_loc=other_loc,
                    other_global_id=None if conflict.other_item == mem.MANY
                    else self.lanes.global_of_linear(conflict.other_item))

    def load(self, ptr: Ptr, t: Type, mask: np.ndarray, loc: Loc,
             align: int | None = None) -> Any:
        """The values of type ``t`` at ``ptr`` for the lanes of ``mask`` (0 elsewhere); the
        address must be a multiple of ``align`` (default: the type's size)."""
        n = len(mask)
        if isinstance(t, PointerType):
            raise Unsupported(f"{loc}: a pointer stored in memory")
        if isinstance(t, StructType):
            return self.load_raw(ptr, t.size, mask, loc, t.align, field_bytes(t))
        width = t.width if isinstance(t, VectorType) else 1
        dtype = val.dtype_of(t)
        nbytes = dtype.itemsize * width
        out = np.zeros(n if width == 1 else (n, width), dtype)
        for region, sel, phys in self._checked(ptr, nbytes, t.size if width == 1 else 0,
                                               mask, loc, False, align or t.size):
            self._track(region, sel, phys, nbytes, loc, False)
            values = mem.gather(region, phys, dtype, width)
            if len(sel) == n:
                out = values
            else:
                out[sel] = values
        return out

    def load_raw(self, ptr: Ptr, nbytes: int, mask: np.ndarray, loc: Loc, align: int = 1,
                 significant: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros((len(mask), nbytes), np.uint8)
        for region, sel, phys in self._checked(ptr, nbytes, nbytes, mask, loc, False, align):
            self._track(region, sel, phys, nbytes, loc, False, significant=significant)
            out[sel] = mem.gather_bytes(region, phys, nbytes)
        return out

    def store(self, ptr: Ptr, t: Type, value: Any, mask: np.ndarray, loc: Loc,
              align: int | None = None) -> None:
        if isinstance(t, PointerType) or isinstance(value, Ptr):
            raise Unsupported(f"{loc}: a pointer stored in memory")
        if isinstance(t, StructType):
            self.store_raw(ptr, t.size, value, mask, loc, t.align)
            return
        width = t.width if isinstance(t, VectorType) else 1
        dtype = val.dtype_of(t)
        if value.dtype != dtype:
            value = value.astype(dtype)
        nbytes = dtype.itemsize * width
        for region, sel, phys in self._checked(ptr, nbytes, t.size if width == 1 else 0,
                                               mask, loc, True, align or t.size):
            part = value if len(sel) == len(mask) else value[sel]
            self._track(region, sel, phys, nbytes, loc, True, part)
            mem.scatter(region, phys, part)

    def store_raw(self, ptr: Ptr, nbytes: int, raw: np.ndarray, mask: np.ndarray,
                  loc: Loc | None, align: int = 1) -> None:
        where = loc or self.kernel.loc
        for region, sel, phys in self._checked(ptr, nbytes, nbytes, mask, where, True, align):
            if loc is not None:
                self._track(region, sel, phys, nbytes, where, True)
            elif region.init is not None:
                region.init[mem.byte_span(phys, nbytes)] = True
            mem.scatter_bytes(region, phys, raw[sel])


@functools.cache
def field_bytes(t: StructType) -> np.ndarray:
    """Per byte of a struct, whether a field (not padding) covers it."""
    covered = np.zeros(t.size, np.bool_)
    offsets, _, _ = t.layout()
    for f, off in zip(t.fields, offsets):
        if isinstance(f.type, StructType):
            covered[off:off + f.type.size] |= field_bytes(f.type)
        elif isinstance(f.type, VectorType) and f.type.width == 3:
            covered[off:off + 3 * f.type.elem.size] = True
        else:
            covered[off:off + f.type.size] = True
    return covered


def _value_keys(values: np.ndarray) -> np.ndarray:
    """One integer per lane identifying the bits of the value it writes."""
    size = values.dtype.itemsize
    bits = np.ascontiguousarray(values).view(np.dtype(f"u{size}")).astype(np.uint64)
    if bits.ndim == 1:
        return bits
    weights = np.arange(1, bits.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(all="ignore"):
        return (bits * weights).sum(axis=1, dtype=np.uint64)
