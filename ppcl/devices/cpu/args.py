"""How the CPU device passes kernel arguments: a ``void **`` array, one pointer an argument.

``args[i]`` points at the bytes of argument ``i``: for a buffer, at the data pointer; for a
value, at its bytes; for a ``__local`` pointer, at a ``size_t`` offset into the group's local
block, after the kernel's own ``__local`` variables (every object ``LOCAL_ALIGN``-aligned).

An :class:`ArgBlock` is that array with the storage its slots point at. It is updated in place
when a launch's arguments change (``set_arg`` between launches): a buffer's address or a
value's bytes are written into the slot's storage, so a repeated launch packs nothing new.
The block keeps no buffer alive (``BufferArg`` holds its owner weakly): the runtime does, for
as long as a launch runs.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from ppcl.compiler.ir.layout import align_up
from ppcl.devices.interface import ArgValue, BufferArg, LocalArg


def local_bytes(args: Sequence[ArgValue], static_bytes: int) -> int:
    """Local memory a launch needs: the kernel's own, then each ``__local`` argument."""
    total = static_bytes
    for arg in args:
        if isinstance(arg, LocalArg):
            total = align_up(total) + arg.nbytes
    return total


def owners(args: Sequence[ArgValue]) -> list[Any]:
    """The objects owning the bytes of a launch's buffer arguments (those still alive)."""
    return [arg.owner for arg in args if isinstance(arg, BufferArg)]


class ArgBlock:
    """The ``void **`` array of one launch's arguments and the storage it points into."""

    __slots__ = ("source", "argv", "local_bytes", "_values", "_holders")

    def __init__(self, args: Sequence[ArgValue], static_bytes: int) -> None:
        self.source = args
        self._values = tuple(args)
        holders: list[Any] = []
        local = static_bytes
        for arg in args:
            holder: Any
            if isinstance(arg, LocalArg):
                local = align_up(local)
                holder = ctypes.c_size_t(local)
                local += arg.nbytes
            elif isinstance(arg, BufferArg):
                holder = ctypes.c_void_p(arg.address)
            else:
                holder = ctypes.create_string_buffer(arg.data, max(1, len(arg.data)))
            holders.append(holder)
        addresses = [ctypes.addressof(holder) for holder in holders]
        self.argv = (ctypes.c_void_p * max(1, len(addresses)))(*addresses)
        self.local_bytes = local
        self._holders = holders

    def update(self, args: Sequence[ArgValue]) -> bool:
        """Write ``args`` into the block in place; False when they need a new block (another
        count, kind or value size, or a ``__local`` size that moves the layout)."""
        values = self._values
        if len(args) != len(values):
            return False
        for i, (new, old) in enumerate(zip(args, values)):
            if new is old:
                continue
            if isinstance(new, BufferArg):
                if not isinstance(old, BufferArg):
                    return False
                self._holders[i].value = new.address
            elif isinstance(new, LocalArg):
                if not isinstance(old, LocalArg) or old.nbytes != new.nbytes:
                    return False
            else:
                if isinstance(old, (BufferArg, LocalArg)) or len(old.data) != len(new.data):
                    return False
                self._holders[i].raw = new.data  # the same length: checked above
        self._values = tuple(args)
        self.source = args
        return True
