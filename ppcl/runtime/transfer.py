"""Data movement commands: ``enqueue_copy`` (host <-> buffer, buffer <-> buffer, linear and
rectangular), fills and maps, with PyOpenCL's keyword names.

Every command checks its bounds when enqueued (``CL_INVALID_VALUE`` outside the buffer) and
that its buffers were not released (``CL_INVALID_MEM_OBJECT``), and moves the bytes with numpy
when it runs. A command that waits holds its buffers' bytes until it has run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppcl.runtime.constants import command_type, map_flags
from ppcl.runtime.errors import integer_arg, make_error
from ppcl.runtime.event import Event
from ppcl.runtime.memory import Buffer, MemoryMap, MemoryObject, host_bytes
from ppcl.runtime.queue import CommandQueue, TransferTask, check_is_queue

Triple = tuple[int, int, int]


def check_range(routine: str, what: str, offset: int, count: int, size: int) -> None:
    if type(offset) is not int:  # a Python int is one already (the common case, checked fast)
        offset = integer_arg(routine, offset, f"{what} offset")
    if type(count) is not int:
        count = integer_arg(routine, count, f"{what} byte count")
    if offset < 0 or count < 0 or offset + count > size:
        raise make_error(routine, "INVALID_VALUE",
                         f"{what}: bytes [{offset}, {offset + count}) are outside "
                         f"the {size} bytes available")


def check_queue(queue: CommandQueue, mem: MemoryObject, routine: str) -> None:
    check_is_queue(queue, routine)
    mem.check_live(routine)
    if mem.context is not queue.context:
        raise make_error(routine, "INVALID_CONTEXT",
                         "the memory object and the queue belong to different contexts")


def check_buffer(queue: CommandQueue, mem: Any, routine: str) -> None:
    """``check_queue`` for a command on buffers: an image (or anything else) is
    ``CL_INVALID_MEM_OBJECT`` rather than bytes read or written without its layout."""
    if not isinstance(mem, Buffer):
        raise make_error(routine, "INVALID_MEM_OBJECT",
                         f"{mem!r} is not a Buffer (images move with enqueue_copy's origin and "
                         "region, enqueue_fill_image and enqueue_map_image)")
    check_queue(queue, mem, routine)


def check_map_flags(mem: MemoryObject, flags: int, routine: str) -> None:
    """Map flags that exist and that the object's host access allows."""
    flags = integer_arg(routine, flags, "map flags")
    known = map_flags.READ | map_flags.WRITE | map_flags.WRITE_INVALIDATE_REGION
    if flags & ~known:
        raise make_error(routine, "INVALID_VALUE", f"unknown map flags {flags:#x}")
    mem.check_host_access(routine, reads=bool(flags & map_flags.READ),
                          writes=bool(flags & (map_flags.WRITE
                                               | map_flags.WRITE_INVALIDATE_REGION)))


# ---------------------------------------------------------------------- linear copies


def enqueue_read_buffer(queue: CommandQueue, mem: Buffer, hostbuf: Any, device_offset: int = 0,
                        wait_for: Sequence[Event] | None = None, is_blocking: bool = True) -> Event:
    routine = "clEnqueueReadBuffer"
    check_buffer(queue, mem, routine)
    mem.check_host_access(routine, reads=True, writes=False)
    host = host_bytes(hostbuf, routine=routine, writable=True, what="destination host array")
    count = host.size
    check_range(routine, "read", device_offset, count, mem.size)
    source = mem.bytes_view()[device_offset:device_offset + count]
    transfer = queue.device.backend.transfer
    if not wait_for:
        event = queue._run_direct(command_type.READ_BUFFER, _move, (transfer, host, source),
                                  None, _as_raised)
        if event is not None:
            return event

    def read(_keep: Buffer = mem) -> None:  # the buffer lives until the command ran
        transfer(host, source)

    return queue._enqueue(command_type.READ_BUFFER, read, wait_for, blocking=is_blocking,
                          routine=routine, uses=(mem,),
                          task=TransferTask(((mem, device_offset, count),), (), hostbuf))


def enqueue_write_buffer(queue: CommandQueue, mem: Buffer, hostbuf: Any, device_offset: int = 0,
                         wait_for: Sequence[Event] | None = None,
                         is_blocking: bool = True) -> Event:
    routine = "clEnqueueWriteBuffer"
    check_buffer(queue, mem, routine)
    mem.check_host_access(routine, reads=False, writes=True)
    host = host_bytes(hostbuf, routine=routine, what="source host array")
    count = host.size
    check_range(routine, "write", device_offset, count, mem.size)
    target = mem.bytes_view()[device_offset:device_offset + count]
    transfer = queue.device.backend.transfer
    if not wait_for:
        event = queue._run_direct(command_type.WRITE_BUFFER, _move, (transfer, target, host),
                                  None, _as_raised)
        if event is not None:
            return event

    def write(_keep: Buffer = mem) -> None:
        transfer(target, host)

    return queue._enqueue(command_type.WRITE_BUFFER, write, wait_for, blocking=is_blocking,
                          routine=routine, uses=(mem,),
                          task=TransferTask((), ((mem, device_offset, count),), hostbuf))


def _move(args: tuple[Any, np.ndarray, np.ndarray]) -> None:
    """A transfer or fill run at once (``CommandQueue._run_direct``), ``args`` its device's
    function and the bytes it moves: ``move(target, source)``."""
    move, target, source = args
    move(target, source)


def _as_raised(error: BaseException, _command: Any) -> BaseException:
    """The error a transfer run at once reports: the one its copy raised."""
    return error


def enqueue_copy_buffer(queue: CommandQueue, src: Buffer, dst: Buffer, byte_count: int = -1,
                        src_offset: int = 0, dst_offset: int = 0,
                        wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueCopyBuffer"
    check_buffer(queue, src, routine)
    check_buffer(queue, dst, routine)
    if byte_count is not None:
        byte_count = integer_arg(routine, byte_count, "byte_count")
    if byte_count is None or byte_count < 0:
        byte_count = min(src.size - src_offset, dst.size - dst_offset)
    check_range(routine, "copy source", src_offset, byte_count, src.size)
    check_range(routine, "copy destination", dst_offset, byte_count, dst.size)
    source = src.bytes_view()[src_offset:src_offset + byte_count]
    target = dst.bytes_view()[dst_offset:dst_offset + byte_count]
    if byte_count and np.shares_memory(source, target):
        raise make_error(routine, "MEM_COPY_OVERLAP", "source and destination regions overlap")

    transfer = queue.device.backend.transfer
    if not wait_for:
        event = queue._run_direct(command_type.COPY_BUFFER, _move, (transfer, target, source),
                                  None, _as_raised)
        if event is not None:
            return event

    def copy(_keep: tuple[Buffer, Buffer] = (src, dst)) -> None:
        transfer(target, source)

    return queue._enqueue(command_type.COPY_BUFFER, copy, wait_for, routine=routine,
                          uses=(src, dst), task=TransferTask(((src, src_offset, byte_count),),
                                                             ((dst, dst_offset, byte_count),)))


# ---------------------------------------------------------------------- rectangular copies


def triple(values: Sequence[int] | int | None, fill: int, what: str, routine: str) -> Triple:
    if values is None:
        values = ()
    elif not isinstance(values, Sequence | np.ndarray):
        values = (values,)  # type: ignore[assignment]  # one integer: a 1-D origin or region
    values = tuple(integer_arg(routine, v, f"entry of the {what}")
                   for v in values)  # type: ignore[union-attr]
    if len(values) > 3:
        raise make_error(routine, "INVALID_VALUE", f"{what} has more than 3 components")
    padded = values + (fill,) * (3 - len(values))
    return padded[0], padded[1], padded[2]


def _pitches(pitches: Sequence[int] | None, region: Triple, routine: str,
             what: str) -> tuple[int, int]:
    given = tuple(integer_arg(routine, p, f"{what} pitch") for p in (pitches or ()))
    row = given[0] if len(given) > 0 and given[0] else region[0]
    slice_ = given[1] if len(given) > 1 and given[1] else region[1] * row
    if row < region[0] or slice_ < region[1] * row:
        raise make_error(routine, "INVALID_VALUE",
                         f"{what} pitches ({row}, {slice_}) are smaller than the region {region}")
    return row, slice_


def _rect_view(data: np.ndarray, origin: Triple, region: Triple, pitches: tuple[int, int],
               routine: str, what: str) -> np.ndarray:
    row, slice_ = pitches
    start = origin[2] * slice_ + origin[1] * row + origin[0]
    if min(origin) < 0 or min(region) <= 0:
        raise make_error(routine, "INVALID_VALUE", f"{what}: bad origin {origin} or region {region}")
    extent = (region[2] - 1) * slice_ + (region[1] - 1) * row + region[0]
    check_range(routine, what, start, extent, data.size)
    return np.lib.stride_tricks.as_strided(
        data[start:], shape=(region[2], region[1], region[0]), strides=(slice_, row, 1))


def _rect_copy(queue: CommandQueue, kind: int, routine: str, target: np.ndarray,
               source: np.ndarray, wait_for: Sequence[Event] | None, blocking: bool,
               buffers: tuple[Buffer, ...]) -> Event:
    transfer = queue.device.backend.transfer

    def copy(_keep: tuple[Buffer, ...] = buffers) -> None:  # buffers live until it ran
        transfer(target, source)

    return queue._enqueue(kind, copy, wait_for, blocking=blocking, routine=routine,
                          uses=buffers)


def enqueue_read_buffer_rect(queue: CommandQueue, mem: Buffer, hostbuf: Any,
                             buffer_origin: Sequence[int], host_origin: Sequence[int],
                             region: Sequence[int], buffer_pitches: Sequence[int] | None = None,
                             host_pitches: Sequence[int] | None = None,
                             wait_for: Sequence[Event] | None = None,
                             is_blocking: bool = True) -> Event:
    routine = "clEnqueueReadBufferRect"
    check_buffer(queue, mem, routine)
    mem.check_host_access(routine, reads=True, writes=False)
    area = triple(region, 1, "region", routine)
    source = _rect_view(mem.bytes_view(), triple(buffer_origin, 0, "buffer_origin", routine),
                        area, _pitches(buffer_pitches, area, routine, "buffer"), routine, "buffer")
    host = host_bytes(hostbuf, routine=routine, writable=True, what="destination host array")
    target = _rect_view(host, triple(host_origin, 0, "host_origin", routine), area,
                        _pitches(host_pitches, area, routine, "host"), routine, "host array")
    return _rect_copy(queue, command_type.READ_BUFFER_RECT, routine, target, source, wait_for,
                      is_blocking, (mem,))


def enqueue_write_buffer_rect(queue: CommandQueue, mem: Buffer, hostbuf: Any,
                              buffer_origin: Sequence[int], host_origin: Sequence[int],
                              region: Sequence[int], buffer_pitches: Sequence[int] | None = None,
                              host_pitches: Sequence[int] | None = None,
                              wait_for: Sequence[Event] | None = None,
                              is_blocking: bool = True) -> Event:
    routine = "clEnqueueWriteBufferRect"
    check_buffer(queue, mem, routine)
    mem.check_host_access(routine, reads=False, writes=True)
    area = triple(region, 1, "region", routine)
    target = _rect_view(mem.bytes_view(), triple(buffer_origin, 0, "buffer_origin", routine),
                        area, _pitches(buffer_pitches, area, routine, "buffer"), routine, "buffer")
    host = host_bytes(hostbuf, routine=routine, what="source host array")
    source = _rect_view(host, triple(host_origin, 0, "host_origin", routine), area,
                        _pitches(host_pitches, area, routine, "host"), routine, "host array")
    return _rect_copy(queue, command_type.WRITE_BUFFER_RECT, routine, target, source, wait_for,
                      is_blocking, (mem,))


def enqueue_copy_buffer_rect(queue: CommandQueue, src: Buffer, dst: Buffer,
                             src_origin: Sequence[int], dst_origin: Sequence[int],
                             region: Sequence[int], src_pitches: Sequence[int] | None = None,
                             dst_pitches: Sequence[int] | None = None,
                             wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueCopyBufferRect"
    check_buffer(queue, src, routine)
    check_buffer(queue, dst, routine)
    area = triple(region, 1, "region", routine)
    source = _rect_view(src.bytes_view(), triple(src_origin, 0, "src_origin", routine), area,
                        _pitches(src_pitches, area, routine, "source"), routine, "source buffer")
    target = _rect_view(dst.bytes_view(), triple(dst_origin, 0, "dst_origin", routine), area,
                        _pitches(dst_pitches, area, routine, "destination"), routine,
                        "destination buffer")
    if np.shares_memory(source, target):
        raise make_error(routine, "MEM_COPY_OVERLAP", "source and destination regions overlap")
    return _rect_copy(queue, command_type.COPY_BUFFER_RECT, routine, target, source, wait_for,
                      False, (src, dst))


# ---------------------------------------------------------------------- enqueue_copy


_RECT_HOST_KEYS = {"buffer_origin", "host_origin", "region", "buffer_pitches", "host_pitches"}
_RECT_BUFFER_KEYS = {"src_origin", "dst_origin", "region", "src_pitches", "dst_pitches"}


def enqueue_copy(queue: CommandQueue, dest: Any, src: Any, **kwargs: Any) -> Event:
    """Copy between host memory and buffers, or between buffers, as PyOpenCL's enqueue_copy."""
    dest_is_mem = isinstance(dest, MemoryObject)
    src_is_mem = isinstance(src, MemoryObject)
    if dest_is_mem and src_is_mem:
        if _RECT_BUFFER_KEYS & kwargs.keys():
            return enqueue_copy_buffer_rect(queue, src, dest, **kwargs)
        return enqueue_copy_buffer(queue, src, dest, **kwargs)
    if dest_is_mem:
        if _RECT_HOST_KEYS & kwargs.keys():
            return enqueue_write_buffer_rect(queue, dest, src, **kwargs)
        return enqueue_write_buffer(queue, dest, src, **_device_offset(kwargs))
    if src_is_mem:
        if _RECT_HOST_KEYS & kwargs.keys():
            return enqueue_read_buffer_rect(queue, src, dest, **kwargs)
        return enqueue_read_buffer(queue, src, dest, **_device_offset(kwargs))
    raise make_error("enqueue_copy", "INVALID_VALUE",
                     "enqueue_copy needs a Buffer as source or destination (host to host "
                     "copies are numpy's job)")


def _device_offset(kwargs: dict[str, Any]) -> dict[str, Any]:
    # PyOpenCL spells the device-side offset of host transfers "device_offset"; older code
    # passes "dst_offset"/"src_offset"
    if "dst_offset" not in kwargs and "src_offset" not in kwargs:
        return kwargs
    kwargs = dict(kwargs)
    for old in ("dst_offset", "src_offset"):
        if old in kwargs:
            kwargs["device_offset"] = kwargs.pop(old)
    return kwargs


# ---------------------------------------------------------------------- fill and map


def enqueue_fill_buffer(queue: CommandQueue, mem: Buffer, pattern: Any, offset: int, size: int,
                        wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueFillBuffer"
    check_buffer(queue, mem, routine)
    if not isinstance(pattern, bytes | bytearray):
        pattern = np.asarray(pattern)
        if pattern.dtype.hasobject:
            raise make_error(routine, "INVALID_VALUE",
                             f"the fill pattern is {pattern!r}: pass a numpy scalar or array")
    pattern_bytes = host_bytes(pattern, routine=routine, what="fill pattern").copy()
    width = pattern_bytes.size
    if width not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise make_error(routine, "INVALID_VALUE",
                         f"the pattern is {width} bytes; it must be 1, 2, 4, ..., 128 bytes")
    if offset % width or size % width:
        raise make_error(routine, "INVALID_VALUE",
                         f"offset {offset} and size {size} must be multiples of the pattern "
                         f"size {width}")
    check_range(routine, "fill", offset, size, mem.size)
    target = mem.bytes_view()[offset:offset + size].reshape(-1, width)

    fill_bytes = queue.device.backend.fill
    if not wait_for:
        event = queue._run_direct(command_type.FILL_BUFFER, _move,
                                  (fill_bytes, target, pattern_bytes), None, _as_raised)
        if event is not None:
            return event

    def fill(_keep: Buffer = mem) -> None:
        fill_bytes(target, pattern_bytes)

    return queue._enqueue(command_type.FILL_BUFFER, fill, wait_for, routine=routine,
                          uses=(mem,), task=TransferTask((), ((mem, offset, size),)))


def enqueue_fill(queue: CommandQueue, dest: Buffer, pattern: Any, size: int, *, offset: int = 0,
                 wait_for: Sequence[Event] | None = None) -> Event:
    """PyOpenCL's ``enqueue_fill(queue, dest, pattern, size, offset=0)``: fills a buffer (its
    shared virtual memory targets do not exist in OpenCL 1.2)."""
    if not isinstance(dest, Buffer):
        raise make_error("clEnqueueFillBuffer", "INVALID_MEM_OBJECT",
                         f"enqueue_fill fills a Buffer, not {type(dest).__name__} (ppcl has no "
                         "shared virtual memory: it implements OpenCL 1.2)")
    return enqueue_fill_buffer(queue, dest, pattern, offset, size, wait_for)


def enqueue_map_buffer(queue: CommandQueue, buf: Buffer, flags: int, offset: int, shape: Any,
                       dtype: Any, order: str = "C", strides: Any = None,
                       wait_for: Sequence[Event] | None = None,
                       is_blocking: bool = True) -> tuple[np.ndarray, Event]:
    """Map a region of ``buf`` as an array (zero copy); unmap with ``ary.base.release()``."""
    routine = "clEnqueueMapBuffer"
    check_buffer(queue, buf, routine)
    check_map_flags(buf, flags, routine)
    dtype = np.dtype(dtype)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    shape = tuple(integer_arg(routine, s, "map shape entry") for s in shape)
    if strides is not None:
        strides = tuple(integer_arg(routine, s, "map stride") for s in strides)
        if len(strides) != len(shape) or min(strides, default=0) < 0 or min(shape, default=0) < 0:
            raise make_error(routine, "INVALID_VALUE",
                             f"strides {strides} for shape {shape}: one non-negative stride "
                             "per dimension")
    count = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if strides is not None:
        # up to the end of the last element, every index at its largest (no element at all
        # when a dimension is 0)
        count = 0 if 0 in shape else \
            sum((s - 1) * st for s, st in zip(shape, strides)) + dtype.itemsize
    check_range(routine, "map", offset, count, buf.size)
    region = queue.device.backend.map(buf.bytes_view()[offset:offset + count])
    view = np.ndarray(shape, dtype=dtype, buffer=region,
                      order=order, strides=strides)  # type: ignore[call-overload,arg-type]
    mapping = MemoryMap(queue, buf, view)
    event = mapping.enqueue(command_type.MAP_BUFFER, wait_for, is_blocking, routine)
    return np.asarray(mapping), event


def enqueue_migrate_mem_objects(queue: CommandQueue, mem_objects: Sequence[MemoryObject],
                                flags: int = 0, wait_for: Sequence[Event] | None = None) -> Event:
    """Memory is host memory on this device: migration is an ordering point only."""
    for mem in mem_objects:
        if not isinstance(mem, MemoryObject):
            raise make_error("clEnqueueMigrateMemObjects", "INVALID_MEM_OBJECT",
                             f"{mem!r} is not a memory object")
        mem.check_live("clEnqueueMigrateMemObjects")
    return queue._enqueue(command_type.MIGRATE_MEM_OBJECTS, lambda: None, wait_for,
                          routine="clEnqueueMigrateMemObjects")
