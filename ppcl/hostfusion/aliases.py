"""The trace-derived alias table (PPOpenCL's host/kernel aliases, Section 3.2.1).

PPOpenCL finds which host object and which kernel argument name the same data by reading the
host program. ppcl sees the host program's calls instead, so the table is built from the
trace: each buffer's creation (a host array copied in, or used in place), every transfer
between a host array and the buffer, every kernel argument it is passed as, and every map or
sub-buffer. Its entries are def-use chains across launches (who wrote the buffer last, who
read it since), and its question is the one the layout optimizer needs answered: does this
buffer flow only through transfers and the kernels host fusion controls, so that its bytes
may be kept in another layout between them?

Scalars reach kernels through arguments too: the values each kernel argument took are kept,
so a decision that relies on a scalar (the column count of a layout change) can tell whether
it stayed the same. A launch host fusion has settled to leave as written adds nothing once its
buffers are known (``_Passes`` in ``__init__``): its entries are those of its first launches
with each set of buffers.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ppcl.runtime.constants import command_type, mem_flags
from ppcl.runtime.queue import TransferTask

MAX_CHAIN = 16  # def-use events kept per buffer (the latest)
MAX_SCALARS = 2  # values kept per scalar argument: enough to tell one value from several


@dataclass
class BufferTrace:
    """What the trace says of one buffer."""

    size: int
    in_place: bool  # created with USE_HOST_PTR: the host may touch the bytes directly
    host_arrays: set[int] = field(default_factory=set)  # ids of host arrays copied in or out
    kernels: set[tuple[int, str, int]] = field(default_factory=set)  # (program, kernel, arg)
    mapped: bool = False
    split: bool = False  # a sub-buffer was made of it
    images: bool = False
    chain: list[str] = field(default_factory=list)  # the latest def-use events, oldest first

    def note(self, event: str) -> None:
        self.chain.append(event)
        del self.chain[:-MAX_CHAIN]


class AliasTable:
    """The aliases of the buffers a host-fusion queue has seen, filled by ``observe`` (every
    command) and ``launched`` (every kernel launch)."""

    def __init__(self) -> None:
        self._buffers: weakref.WeakKeyDictionary[Any, BufferTrace] = weakref.WeakKeyDictionary()
        self.scalars: dict[tuple[int, str, int], set[bytes]] = {}

    def trace(self, mem: Any) -> BufferTrace:
        entry = self._buffers.get(mem)
        if entry is None:
            entry = BufferTrace(mem.size, bool(mem.flags & mem_flags.USE_HOST_PTR))
            if mem.hostbuf is not None and not entry.in_place:
                entry.host_arrays.add(id(mem.hostbuf))
                entry.note("host array copied in at creation")
            self._buffers[mem] = entry
        return entry

    def observe(self, kind: int, uses: Sequence[Any], task: Any) -> None:
        """A command other than a kernel launch: transfers name their host array."""
        for mem in uses:
            root = mem._root or mem
            entry = self.trace(root)
            if root is not mem:
                entry.split = True
            if isinstance(task, TransferTask):
                direction = "written by" if any(m is mem for m, _o, _s in task.writes) \
                    else "read by"
                if task.host is not None:
                    entry.host_arrays.add(id(task.host))
                    entry.note(f"{direction} a transfer with host array {id(task.host):#x}")
                else:
                    entry.note(f"{direction} a buffer copy")
            elif kind in (command_type.COPY_BUFFER_TO_IMAGE, command_type.COPY_IMAGE_TO_BUFFER):
                entry.images = True
                entry.note("copied to or from an image")
            elif kind in (command_type.MAP_BUFFER, command_type.UNMAP_MEM_OBJECT):
                entry.mapped = True
                entry.note("mapped")
            elif kind != command_type.NDRANGE_KERNEL:
                entry.note(f"used by command {command_type.to_string(kind)}")

    def launched(self, kernel: Any, args: Sequence[Any], params: Sequence[Any]) -> None:
        """A kernel launch: each buffer argument is aliased to the kernel's parameter."""
        program = id(kernel.program)
        for index, arg in enumerate(args):
            owner = getattr(arg, "owner", None)
            if owner is not None:
                root = owner._root or owner
                entry = self.trace(root)
                if root is not owner:
                    entry.split = True
                entry.kernels.add((program, kernel.function_name, index))
                entry.note(f"argument {index} ({params[index].name}) of kernel "
                           f"{kernel.function_name}")
            elif hasattr(arg, "data"):
                seen = self.scalars.setdefault((program, kernel.function_name, index), set())
                if len(seen) < MAX_SCALARS:
                    seen.add(arg.data)

    def exclusive(self, mem: Any, kernel: Any, index: int,
                  partners: Collection[int] = ()) -> tuple[bool, str]:
        """Whether ``mem`` flows only through transfers and argument ``index`` of ``kernel``
        (or its ``partners``: arguments of the kernel rewritten to the same layout, such as
        the two buffers a time step swaps), and why not."""
        entry = self.trace(mem._root or mem)
        if mem._root is not None or entry.split:
            return False, "a sub-buffer shares its bytes"
        if entry.in_place:
            return False, "created with USE_HOST_PTR: the host may read the bytes in place"
        if entry.mapped:
            return False, "mapped: the host reads or writes the bytes in place"
        if entry.images:
            return False, "copied to or from an image"
        mine = {(id(kernel.program), kernel.function_name, i) for i in (index, *partners)}
        others = set(entry.kernels) - mine
        if others:
            names = ", ".join(sorted(f"{name} (argument {i})" for _p, name, i in others))
            return False, f"also used by {names}"
        return True, (f"only transfers ({len(entry.host_arrays)} host arrays) and this "
                      "argument")

    def scalar_constant(self, kernel: Any, index: int) -> bool:
        """Whether scalar argument ``index`` of ``kernel`` has had one value in the trace."""
        return len(self.scalars.get((id(kernel.program), kernel.function_name, index),
                                    ())) <= 1

    def describe(self) -> Iterator[str]:
        for entry in list(self._buffers.values()):
            kernels = ", ".join(sorted(f"{name}[{i}]" for _p, name, i in entry.kernels))
            yield (f"buffer of {entry.size} bytes: host arrays {len(entry.host_arrays)}, "
                   f"kernels {kernels or '-'}; last: {'; '.join(entry.chain[-3:])}")
