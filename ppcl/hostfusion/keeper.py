"""Buffers kept in another layout between the kernels that read them that way.

A layout change (``compiler/transforms/layout.py``) makes a kernel read a buffer as the
transpose of its ``rows x columns`` view. The keeper holds that transposed copy (the shadow)
next to the buffer and knows which of the two holds the current bytes: the shadow is filled
(shuffled) when a rewritten launch needs it and is stale, the buffer gets its bytes back
(shuffled back) before any other command touches it: a read to the host, a map, a launch
that was not rewritten. So the layout is changed at the first transfer into a rewritten
kernel and changed back at the first transfer out, and a time-step loop of rewritten launches
shuffles once. Every shuffle a command other than the rewritten launches causes (a transfer,
or another kernel reading the buffer as written) is charged to the layout: the guard weighs
it against what the layout saves (``Trial.watch`` in ``guard.py``).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

import numpy as np

from ppcl.compiler.transforms.layout import from_transposed, to_transposed
from ppcl.runtime.constants import mem_flags
from ppcl.runtime.memory import Buffer, Kept


class Keeper:
    """The transposed copy of one buffer, viewed as ``rows x columns`` elements of ``dtype``."""

    def __init__(self, mem: Any, dtype: np.dtype, rows: int, columns: int) -> None:
        self.dtype = dtype
        self.rows = rows
        self.columns = columns
        self.shadow = Buffer(mem.context, mem_flags.READ_WRITE, mem.size)
        self.shadow_current = False  # the shadow holds the bytes (or both do)
        self.original_current = True
        self.shuffles = 0
        self.charged_ns = 0  # time of the shuffles other commands caused, not yet counted
        self.charge_prepare = False  # another command made the shadow stale: the next shuffle in counts
        self.active = True  # counted in Kept until released or the buffer is collected
        self.abandoned = False  # no chosen kernel reads the layout: release at the next restore
        self.lock = threading.Lock()

    def _elements(self, mem: Any) -> np.ndarray:
        return mem.bytes_view()[:self.rows * self.columns * self.dtype.itemsize].view(self.dtype)

    def prepare(self, mem: Any) -> Any:
        """The shadow, filled from the buffer if it is stale (before a rewritten launch)."""
        with self.lock:
            if not self.shadow_current:
                start = time.perf_counter_ns()
                to_transposed(self._elements(mem), self.rows, self.columns,
                              out=self._elements(self.shadow))
                if self.charge_prepare:
                    self.charged_ns += time.perf_counter_ns() - start
                self.shadow_current = True
                self.shuffles += 1
            self.charge_prepare = False
            return self.shadow

    def take_charge(self) -> int:
        """The time of the shuffles transfers caused since the last call (nanoseconds)."""
        with self.lock:
            charged, self.charged_ns = self.charged_ns, 0
            return charged

    def written_by_kernel(self) -> None:
        """A rewritten launch wrote the shadow: the buffer's own bytes are stale."""
        self.original_current = False

    def restore(self, mem: Any, written: bool) -> None:
        """Give the buffer its bytes back before a command that reads it as it is; a command
        that ``written`` leaves the shadow stale. The shuffles are charged to the layout."""
        with self.lock:
            if not self.original_current:
                start = time.perf_counter_ns()
                from_transposed(self._elements(self.shadow), self.rows, self.columns,
                                out=self._elements(mem))
                self.charged_ns += time.perf_counter_ns() - start
                self.original_current = True
                self.shuffles += 1
            if written:
                self.shadow_current = False
                self.charge_prepare = True
        if self.abandoned and mem.keeper is self:
            release(mem)


def keep(mem: Any, dtype: np.dtype, rows: int, columns: int) -> Keeper:
    """The keeper of ``mem`` for this view, made (or remade, the old view restored) if needed."""
    keeper = mem.keeper
    if keeper is not None:
        if (keeper.dtype, keeper.rows, keeper.columns) == (dtype, rows, columns):
            return keeper
        keeper.restore(mem, True)
        release(mem)
    keeper = Keeper(mem, dtype, rows, columns)
    mem.keeper = keeper
    Kept.count += 1
    weakref.finalize(mem, _forget, keeper)
    return keeper


def release(mem: Any) -> None:
    """Stop keeping ``mem`` (its bytes must be current)."""
    keeper = mem.keeper
    if keeper is not None:
        mem.keeper = None
        _forget(keeper)


def _forget(keeper: Keeper) -> None:
    if keeper.active:
        keeper.active = False
        Kept.count -= 1
