"""How the CPU device passes kernel arguments: a ``void **`` array, one pointer an argument.

``args[i]`` points at the bytes of argument ``i``: for a buffer, at the data pointer; for a
value, at its bytes; for a ``__local`` pointer, at a ``size_t`` offset into the group's local
block, after the kernel's own ``__local`` variables (every object ``LOCAL_ALIGN``-aligned).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from ppcl.compiler.ir.layout import align_up
from ppcl.devices.interface import ArgValue, BufferArg, LocalArg


class PackedArgs:
    """The ``void **`` array of one tuple of argument values and the objects it points into."""

    __slots__ = ("source", "argv", "local_bytes", "_kept")

    def __init__(self, args: Sequence[ArgValue], static_bytes: int) -> None:
        self.source = args
        kept: list[Any] = []
        addresses: list[int] = []
        local = static_bytes
        for arg in args:
            holder: Any
            if isinstance(arg, LocalArg):
                local = align_up(local)
                holder = ctypes.c_size_t(local)
                local += arg.nbytes
            elif isinstance(arg, BufferArg):
                holder = ctypes.c_void_p(arg.address)
                kept.append(arg.owner)
            else:
                holder = ctypes.create_string_buffer(arg.data, max(1, len(arg.data)))
            kept.append(holder)
            addresses.append(ctypes.addressof(holder))
        self.argv = (ctypes.c_void_p * max(1, len(addresses)))(*addresses)
        self.local_bytes = local
        self._kept = tuple(kept)
