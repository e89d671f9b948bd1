"""Host memory for devices that run on the host: regions carved first-fit out of large chunks, as pocl's bufalloc does.

Small and medium buffers are regions of chunks (``CHUNK_SIZE`` bytes each, more chunks added on
demand); a freed region merges with free neighbours. In greedy mode (pocl's "wasteful"
strategy) an allocation first tries the free space right after the previous allocation, so a run
of successive allocations is a bump of a pointer; only when that does not fit does it search the
chunk first-fit. Buffers of ``LARGE_SIZE`` bytes or more get their own block: for them a chunk
saves nothing. A freed large block is kept (up to ``KEEP_LARGE`` bytes in all, the oldest given
back first) and handed to the next buffer of its page-rounded size: a program that makes and
releases the same temporaries every frame or step would otherwise pay the kernel's page faults
on every first touch of fresh memory (about 1 ms for 4 MiB), more than a small kernel's run.
Every address is aligned to ``ALIGNMENT`` (128 bytes, the device's ``mem_base_addr_align``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ppcl.devices import interface

ALIGNMENT = 128
CHUNK_SIZE = 16 * 1024 * 1024
LARGE_SIZE = 4 * 1024 * 1024
KEEP_LARGE = 512 * 1024 * 1024
PAGE = 4096


def aligned_bytes(size: int) -> np.ndarray:
    """A 1-D uint8 array of ``size`` bytes whose address is a multiple of ``ALIGNMENT``."""
    raw = np.empty(size + ALIGNMENT, dtype=np.uint8)
    skip = (-raw.ctypes.data) % ALIGNMENT
    return raw[skip:skip + size]


def _round_up(size: int) -> int:
    return (max(size, 1) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


class _Region:
    __slots__ = ("offset", "size", "free")

    def __init__(self, offset: int, size: int, free: bool) -> None:
        self.offset = offset
        self.size = size
        self.free = free


class _Chunk:
    """One block of memory split into an ordered list of regions covering it."""

    def __init__(self, size: int) -> None:
        self.storage = aligned_bytes(size)
        self.size = size
        self.regions = [_Region(0, size, True)]
        self.last = 0  # index of the region allocated last (greedy mode starts after it)
        self.used = 0

    def _carve(self, index: int, size: int) -> _Region:
        region = self.regions[index]
        if region.size > size:
            self.regions.insert(index + 1, _Region(region.offset + size, region.size - size, True))
            region.size = size
        region.free = False
        self.last = index
        self.used += size
        return region

    def allocate(self, size: int, greedy: bool) -> _Region | None:
        if self.size - self.used < size:
            return None
        if greedy:
            following = self.last + 1 if not self.regions[self.last].free else self.last
            if following < len(self.regions):
                region = self.regions[following]
                if region.free and region.size >= size:
                    return self._carve(following, size)
        for index, region in enumerate(self.regions):
            if region.free and region.size >= size:
                return self._carve(index, size)
        return None

    def free(self, region: _Region) -> None:
        index = self.regions.index(region)
        region.free = True
        self.used -= region.size
        following = index + 1
        if following < len(self.regions) and self.regions[following].free:
            region.size += self.regions.pop(following).size
        if index > 0 and self.regions[index - 1].free:
            previous = self.regions[index - 1]
            previous.size += self.regions.pop(index).size
            index -= 1
        self.last = min(self.last, len(self.regions) - 1)


class Allocation(interface.Allocation):
    """Memory handed out by the allocator; ``array`` is the uint8 view of its bytes."""

    __slots__ = ("array", "address", "_owner", "_chunk", "_region", "_block")

    def __init__(self, array: np.ndarray, owner: BufferAllocator | None,
                 chunk: _Chunk | None = None, region: _Region | None = None,
                 block: np.ndarray | None = None) -> None:
        self.array = array
        self.address: int = array.ctypes.data
        self._owner = owner
        self._chunk = chunk
        self._region = region
        self._block = block  # a large buffer's own block, kept for reuse when freed

    def release(self) -> None:
        owner, self._owner = self._owner, None
        if owner is None:
            return
        if self._chunk is not None and self._region is not None:
            owner._free(self._chunk, self._region)
        elif self._block is not None:
            owner._keep(self._block)


class BufferAllocator:
    """Thread-safe allocator of device memory."""

    def __init__(self, chunk_size: int = CHUNK_SIZE, large_size: int = LARGE_SIZE,
                 greedy: bool = True) -> None:
        self.chunk_size = chunk_size
        self.large_size = large_size
        self.greedy = greedy
        self._chunks: list[_Chunk] = []
        # freed large blocks: serial numbers by size, and the blocks by serial, oldest first
        self._kept: dict[int, list[int]] = {}
        self._kept_order: OrderedDict[int, np.ndarray] = OrderedDict()
        self._kept_bytes = 0
        self._serial = 0
        self._lock = threading.Lock()

    def allocate(self, size: int) -> Allocation:
        if size >= self.large_size:
            return self._allocate_large(size)
        rounded = _round_up(size)
        with self._lock:
            for chunk in reversed(self._chunks) if self.greedy else self._chunks:
                region = chunk.allocate(rounded, self.greedy)
                if region is not None:
                    break
            else:
                chunk = _Chunk(max(self.chunk_size, rounded))
                self._chunks.append(chunk)
                region = chunk.allocate(rounded, self.greedy)
                assert region is not None
        view = chunk.storage[region.offset:region.offset + size]
        return Allocation(view, self, chunk, region)

    def _allocate_large(self, size: int) -> Allocation:
        rounded = -(-size // PAGE) * PAGE
        block = None
        with self._lock:
            serials = self._kept.get(rounded)
            if serials:
                block = self._kept_order.pop(serials.pop())
                self._kept_bytes -= block.size
        if block is None:
            block = aligned_bytes(rounded)
        return Allocation(block[:size], self, block=block)

    def _keep(self, block: np.ndarray) -> None:
        if block.size > KEEP_LARGE:
            return
        with self._lock:
            self._serial += 1
            self._kept.setdefault(block.size, []).append(self._serial)
            self._kept_order[self._serial] = block
            self._kept_bytes += block.size
            while self._kept_bytes > KEEP_LARGE:  # give back the oldest
                serial, oldest = self._kept_order.popitem(last=False)
                self._kept[oldest.size].remove(serial)
                self._kept_bytes -= oldest.size

    def _free(self, chunk: _Chunk, region: _Region) -> None:
        with self._lock:
            chunk.free(region)
            if chunk.used == 0 and len(self._chunks) > 1:
                self._chunks.remove(chunk)

    @property
    def chunk_count(self) -> int:
        return len(self._chunks)

    def bytes_in_use(self) -> int:
        with self._lock:
            return sum(chunk.used for chunk in self._chunks)
