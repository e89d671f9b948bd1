"""The printf buffer of a compiled kernel, printed by the device after a launch.

A kernel that calls ``printf`` appends records to a buffer its C unit exports
(``ppcl_printf_buffer``, with the counters ``ppcl_printf_used`` and ``ppcl_printf_dropped``;
``compiler/codegen/c_printf.py``); no C library call prints anything. After the launch's groups
have run, the device decodes the records, orders them by the global linear id of the work-item
that wrote them (a stable sort: one work-item's records stay in the order of its calls, and its
output comes in one piece, even where its calls sit between barriers or other threads' records
came between them; OpenCL leaves the order between work-items open, ppcl prints them in
work-item order), prints them with ppcl's formatter (``cformat.py``) to ``sys.stdout``, and
empties the buffer, all before the launch's event completes, so ``finish`` and ``wait``
return after the output. Records that did not fit were dropped by the kernel; a line on
stderr names the kernel and says how many calls and bytes were lost.

One buffer serves every launch of the loaded library, and while a library is loaded every
program of its source shares it (``toolchain.load``), so launches of kernels that print hold the buffer's lock from their first
group to the printing of their records.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import threading
from collections.abc import Iterator, Sequence

from ppcl.compiler.ir.printf_spec import HEADER_BYTES, PrintfFormat
from ppcl.devices.cformat import render

_HEADER = struct.Struct("<IIQ")  # format id, record bytes, work-item
_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_of(address: int) -> threading.Lock:
    """The one lock of the buffer at ``address``."""
    with _locks_guard:
        return _locks.setdefault(address, threading.Lock())


class PrintfBufferError(RuntimeError):
    """Records that do not match the kernel's format table (a damaged buffer)."""


def decode_records(data: bytes, formats: Sequence[PrintfFormat]) -> Iterator[str]:
    """The text of each record of ``data``, by work-item, each work-item's in buffer order."""
    records = sorted(_records(data, formats), key=lambda record: record[0])
    return (render(fmt, slots) for _, fmt, slots in records)


def _records(data: bytes, formats: Sequence[PrintfFormat]
             ) -> Iterator[tuple[int, PrintfFormat, tuple[int, ...]]]:
    """Each record of ``data`` in buffer order: work-item, format, slots."""
    pos = 0
    while pos < len(data):
        if pos + HEADER_BYTES > len(data):
            raise PrintfBufferError(f"printf record at byte {pos} is cut short")
        format_id, size, item = _HEADER.unpack_from(data, pos)
        if format_id >= len(formats) or size != formats[format_id].record_bytes \
                or pos + size > len(data):
            raise PrintfBufferError(f"printf record at byte {pos} has format {format_id} and "
                                    f"{size} bytes, which the kernel's table does not hold")
        fmt = formats[format_id]
        slots = struct.unpack_from(f"<{fmt.slots}Q", data, pos + HEADER_BYTES)
        yield item, fmt, slots
        pos += size


def write_output(text: str) -> None:
    """``text`` (characters 0-255, one per byte) written to ``sys.stdout`` as the bytes a C
    program would write, and flushed."""
    stream = sys.stdout
    if stream is None:
        return
    data = text.encode("latin-1")
    binary = getattr(stream, "buffer", None)
    stream.flush()
    if binary is not None:
        binary.write(data)
        binary.flush()
    else:  # a text-only stream (a notebook's)
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()


class PrintfBuffer:
    """The printf buffer of one loaded kernel library."""

    def __init__(self, library: ctypes.CDLL, formats: tuple[PrintfFormat, ...],
                 kernel_name: str) -> None:
        self.capacity = ctypes.c_size_t.in_dll(library, "ppcl_printf_capacity").value
        self._data = (ctypes.c_char * self.capacity).in_dll(library, "ppcl_printf_buffer")
        self._used = ctypes.c_size_t.in_dll(library, "ppcl_printf_used")
        self._dropped = ctypes.c_size_t.in_dll(library, "ppcl_printf_dropped")
        self.formats = formats
        self.kernel_name = kernel_name
        self.lock = _lock_of(ctypes.addressof(self._data))

    def print_records(self) -> None:
        """Print the records left by the launch that just ran, then empty the buffer; the
        caller holds ``lock`` from before the launch's first group."""
        used = self._used.value
        dropped = self._dropped.value
        if used == 0 and dropped == 0:
            return
        data = ctypes.string_at(ctypes.addressof(self._data), used)
        self._used.value = 0
        self._dropped.value = 0
        write_output("".join(decode_records(data, self.formats)))
        if dropped:
            print(f"ppcl: warning: kernel '{self.kernel_name}': the printf buffer "
                  f"({self.capacity} bytes) was full, {dropped} printf call"
                  f"{'s' if dropped != 1 else ''} not printed", file=sys.stderr, flush=True)
