"""Host and kernel optimized together (after PPOpenCL): coarsening, data layout and holistic
vectorization, decided per device at enqueue time from what the program does.

``enable(queue)`` (or ``PPCL_HOSTFUSION=1`` for every queue) lets the queue's kernel launches be
rewritten: a launch may run a coarsened kernel over a smaller NDRange, a kernel reading a buffer
in another layout (the buffer shuffled on the way in and back on the way out), or a vectorized
kernel. Every rewrite is timed against the original on the first launches of a shape and kept
only when faster; ``PPCL_DEBUG=hostfusion`` prints every decision and its reason.
"""

from __future__ import annotations

from typing import Any

__all__ = ["disable", "enable"]


def enable(queue: Any) -> bool:
    """Let host fusion rewrite ``queue``'s kernel launches from now on."""
    queue._hostfusion = True
    return True


def disable(queue: Any) -> None:
    """Launch ``queue``'s kernels as written from now on."""
    queue._hostfusion = False
