"""Sizes and places fixed by the execution model: 3-D padding, alignment, the local block.

One definition of each fact, imported by the front end (kernel signatures), work-group
formation and the devices' argument layout.
"""

from __future__ import annotations

from collections.abc import Sequence

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import AddressSpace, Type
from ppcl.compiler.ir.visit import Node, walk

Size3 = tuple[int, int, int]
LOCAL_ALIGN = 128  # every __local object starts on a 128-byte boundary (vectors, cache lines)


# What an image argument points at, filled by the host and read by the image builtins:
# (field, C element type, count), each field naturally aligned in this order. ``extent`` and
# ``pitch`` are per addressed axis (x, y, z; an array's layers are its last axis, 1 past the
# image's dimensions), ``order``/``type`` the CL_* channel order and data type codes.
IMAGE_DESCRIPTOR: tuple[tuple[str, str, int], ...] = (
    ("data", "char *", 1), ("extent", "size_t", 3), ("pitch", "size_t", 3),
    ("order", "int", 1), ("type", "int", 1), ("channels", "int", 1), ("reserved", "int", 1),
)
IMAGE_C_SIZES = {"char *": 8, "size_t": 8, "int": 4}
IMAGE_DESCRIPTOR_BYTES = sum(IMAGE_C_SIZES[ctype] * count for _, ctype, count in IMAGE_DESCRIPTOR)


def align_up(value: int, alignment: int = LOCAL_ALIGN) -> int:
    """``value`` rounded up to a multiple of ``alignment``."""
    return (value + alignment - 1) // alignment * alignment


def pad3(values: Sequence[int] | int, fill: int = 1) -> Size3:
    """A size or offset of 1 to 3 entries as three entries, the missing ones ``fill``."""
    if isinstance(values, int):
        values = (values,)
    padded = [int(v) for v in values] + [fill] * (3 - len(values))
    return padded[0], padded[1], padded[2]


# Context arrays (a private value per work-item, live across a barrier) of more bytes than this
# do not go on the executing thread's stack, which a group of 4096 work-items with a private
# array of 512 floats (8 MiB) would overflow; they take their place in the group's block.
CONTEXT_STACK_BYTES = 256 * 1024


def context_block_layout(sizes: Sequence[tuple[str, int]], start: int,
                         items: int) -> tuple[dict[str, int], int]:
    """Offsets in the group's block, from ``start``, of context arrays of ``items`` entries of
    the given element sizes, and the end of the last; none (and ``start``) when together they
    fit ``CONTEXT_STACK_BYTES`` and live on the stack."""
    if sum(size for _, size in sizes) * items <= CONTEXT_STACK_BYTES:
        return {}, start
    offsets: dict[str, int] = {}
    offset = start
    for name, size in sizes:
        offset = align_up(offset)
        offsets[name] = offset
        offset += size * items
    return offsets, offset


def static_local_layout(body: Node) -> tuple[tuple[tuple[str, Type, int], ...], int]:
    """The ``__local`` variables declared in ``body`` with their offsets in the group's local
    block, in declaration order, and the bytes they take (before any ``__local`` argument)."""
    placed: list[tuple[str, Type, int]] = []
    offset = 0
    for n in walk(body):
        if isinstance(n, ir.DeclStmt):
            for d in n.decls:
                if d.space is AddressSpace.LOCAL:
                    offset = align_up(offset)
                    placed.append((d.name, d.type, offset))
                    offset += d.type.size
    return tuple(placed), offset
