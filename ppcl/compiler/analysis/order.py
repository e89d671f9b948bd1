"""The execution order of a work-group's work-items on a device (PPOpenCL's WII model).

A device runs the operations of a work-group's work-items in one of two orders:

* ``serial``: one work-item runs to its end (or to the next barrier) before the next starts;
  the WII function of operation ``op`` of work-item ``tid`` is ``ops * tid + op``.
* ``data-parallel``: ``lanes`` consecutive work-items along ``vector_dim`` run each operation
  together, as one vector operation (``ops * (tid // lanes) + op``); a GPU warp, or the CPU
  device's vectorized work-item loop.

The analyses that need an order (reuse distances, which dimension coarsening may take, how
wide holistic vectorization may go) take this value as an argument; ``ppcl.hostfusion.model``
derives it from a device. It is a plain description, with no device in it, so the compiler's
analyses stay below the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

SERIAL = "serial"
DATA_PARALLEL = "data-parallel"


@dataclass(frozen=True)
class ExecutionOrder:
    """How a device interleaves the work-items of a group, and the constants its cost models
    use."""

    kind: str  # SERIAL or DATA_PARALLEL
    lanes: int  # work-items run together along vector_dim (1 when serial)
    vector_dim: int = 0  # the dimension whose consecutive work-items share a vector operation
    line_bytes: int = 64  # cache line (or coalescing segment) size
    vector_bytes: int = 32  # widest SIMD register or vector load, in bytes
    registers: int = 16  # vector registers a work-item (CPU) or a thread (GPU) may use
    warp: int = 0  # GPU: threads of a warp (0 on a CPU)
    min_group: int = 1  # GPU: work-items a group keeps after coarsening (128), 1 on a CPU
    # the device's own compiler already vectorizes across work-items (holistic vectorization
    # then only adds what it cannot do: wide loads of explicit vector code, or nothing)
    vectorizes_items: bool = False

    @property
    def is_gpu(self) -> bool:
        return self.warp > 0

    def describe(self) -> str:
        if self.kind == SERIAL:
            return f"serial, {self.line_bytes}-byte lines"
        where = f"warps of {self.warp}" if self.is_gpu else f"{self.lanes} lanes"
        return (f"data-parallel along dimension {self.vector_dim} ({where}), "
                f"{self.line_bytes}-byte lines, {self.vector_bytes}-byte vectors")
