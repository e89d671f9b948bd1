"""Image commands with PyOpenCL's names: ``enqueue_copy`` between images, buffers and host
memory (``origin``/``region`` in texels, host ``pitches`` in bytes), ``enqueue_fill_image`` and
``enqueue_map_image``.

``enqueue_copy`` here takes the image cases and hands every other one to the buffer copies of
``transfer``. Regions are checked when enqueued (``CL_INVALID_VALUE`` outside the image); the
bytes move with numpy, row by row through strided views, when the command runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppcl.compiler.frontend import image_formats
from ppcl.runtime import transfer
from ppcl.runtime.constants import channel_type, command_type
from ppcl.runtime.errors import make_error
from ppcl.runtime.event import Event
from ppcl.runtime.image import Image, ImageFormat, Triple, host_pitches, texel_view
from ppcl.runtime.memory import Buffer, MemoryMap, MemoryObject, host_bytes
from ppcl.runtime.queue import CommandQueue
from ppcl.runtime.transfer import check_buffer, check_map_flags, check_queue, check_range, triple


def _copy(queue: CommandQueue, kind: int, routine: str, target: np.ndarray, source: np.ndarray,
          wait_for: Sequence[Event] | None, blocking: bool,
          objects: tuple[MemoryObject, ...]) -> Event:
    move = queue.device.backend.transfer

    def copy(_keep: tuple[MemoryObject, ...] = objects) -> None:  # they live until it ran
        move(target, source)

    return queue._enqueue(kind, copy, wait_for, blocking=blocking, routine=routine,
                          uses=objects)


def _image_region(queue: CommandQueue, image: Image, origin: Sequence[int] | None,
                  region: Sequence[int] | None, routine: str, what: str) -> tuple[Triple, Triple]:
    if not isinstance(image, Image):
        raise make_error(routine, "INVALID_MEM_OBJECT", f"the {what} {image!r} is not an Image")
    check_queue(queue, image, routine)
    start = triple(origin, 0, f"{what} origin", routine)
    rest = tuple(max(e - o, 1) for e, o in zip(image.extent, start))  # origin to the end
    area = triple(region if region is not None else rest, 1, f"{what} region", routine)
    image.check_region(routine, start, area, what)
    return start, area


def _host_view(hostbuf: Any, image: Image, area: Triple, pitches: Sequence[int] | None,
               routine: str, *, writable: bool) -> np.ndarray:
    host = host_bytes(hostbuf, routine=routine, writable=writable,
                      what="destination host array" if writable else "source host array")
    element = image.format.itemsize
    strides = host_pitches(pitches, area, element, image.image_type, routine)
    needed = (area[2] - 1) * strides[2] + (area[1] - 1) * strides[1] + area[0] * element
    if host.size < needed:
        raise make_error(routine, "INVALID_VALUE",
                         f"the host array has {host.size} bytes; the region needs {needed}")
    return texel_view(host, (0, 0, 0), area, strides, element)


def _pitches(kwargs: dict[str, Any]) -> Sequence[int] | None:
    pitches = kwargs.pop("pitches", None)
    row, slice_ = kwargs.pop("row_pitch", 0), kwargs.pop("slice_pitch", 0)
    return pitches if pitches is not None else (row, slice_)


def enqueue_read_image(queue: CommandQueue, image: Image, origin: Sequence[int] | None,
                       region: Sequence[int] | None, hostbuf: Any, pitches: Sequence[int] | None = None,
                       wait_for: Sequence[Event] | None = None,
                       is_blocking: bool = True) -> Event:
    routine = "clEnqueueReadImage"
    start, area = _image_region(queue, image, origin, region, routine, "image")
    image.check_host_access(routine, reads=True, writes=False)
    target = _host_view(hostbuf, image, area, pitches, routine, writable=True)
    return _copy(queue, command_type.READ_IMAGE, routine, target, image.region(start, area),
                 wait_for, is_blocking, (image,))


def enqueue_write_image(queue: CommandQueue, image: Image, origin: Sequence[int] | None,
                        region: Sequence[int] | None, hostbuf: Any,
                        pitches: Sequence[int] | None = None,
                        wait_for: Sequence[Event] | None = None,
                        is_blocking: bool = True) -> Event:
    routine = "clEnqueueWriteImage"
    start, area = _image_region(queue, image, origin, region, routine, "image")
    image.check_host_access(routine, reads=False, writes=True)
    source = _host_view(hostbuf, image, area, pitches, routine, writable=False)
    return _copy(queue, command_type.WRITE_IMAGE, routine, image.region(start, area), source,
                 wait_for, is_blocking, (image,))


def enqueue_copy_image(queue: CommandQueue, src: Image, dest: Image,
                       src_origin: Sequence[int] | None = None,
                       dest_origin: Sequence[int] | None = None,
                       region: Sequence[int] | None = None,
                       wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueCopyImage"
    if src.format != dest.format:
        raise make_error(routine, "IMAGE_FORMAT_MISMATCH",
                         f"source {src.format!r} and destination {dest.format!r} differ")
    s_start, area = _image_region(queue, src, src_origin, region, routine, "source")
    d_start, _ = _image_region(queue, dest, dest_origin, area, routine, "destination")
    source, target = src.region(s_start, area), dest.region(d_start, area)
    if np.shares_memory(source, target):
        raise make_error(routine, "MEM_COPY_OVERLAP", "source and destination regions overlap")
    return _copy(queue, command_type.COPY_IMAGE, routine, target, source, wait_for, False,
                 (src, dest))


def _buffer_view(queue: CommandQueue, buffer: Buffer, offset: int, area: Triple, element: int,
                 routine: str) -> np.ndarray:
    check_buffer(queue, buffer, routine)
    count = area[0] * area[1] * area[2] * element
    check_range(routine, "buffer", offset, count, buffer.size)
    row = area[0] * element
    return texel_view(buffer.bytes_view()[offset:], (0, 0, 0), area,
                      (element, row, row * area[1]), element)


def enqueue_copy_image_to_buffer(queue: CommandQueue, src: Image, dest: Buffer,
                                 origin: Sequence[int] | None = None,
                                 region: Sequence[int] | None = None, offset: int = 0,
                                 wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueCopyImageToBuffer"
    start, area = _image_region(queue, src, origin, region, routine, "image")
    target = _buffer_view(queue, dest, offset, area, src.format.itemsize, routine)
    return _copy(queue, command_type.COPY_IMAGE_TO_BUFFER, routine, target,
                 src.region(start, area), wait_for, False, (src, dest))


def enqueue_copy_buffer_to_image(queue: CommandQueue, src: Buffer, dest: Image, offset: int = 0,
                                 origin: Sequence[int] | None = None,
                                 region: Sequence[int] | None = None,
                                 wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueCopyBufferToImage"
    start, area = _image_region(queue, dest, origin, region, routine, "image")
    source = _buffer_view(queue, src, offset, area, dest.format.itemsize, routine)
    return _copy(queue, command_type.COPY_BUFFER_TO_IMAGE, routine, dest.region(start, area),
                 source, wait_for, False, (src, dest))


def enqueue_copy(queue: CommandQueue, dest: Any, src: Any, **kwargs: Any) -> Event:
    """PyOpenCL's ``enqueue_copy``: the image cases here, the others in ``transfer``. An
    image's ``origin`` (``src_origin``, ``dest_origin``) is (0, 0, 0) and its ``region`` the
    whole image when not given, where PyOpenCL needs both."""
    if isinstance(dest, Image):
        if isinstance(src, Image):
            return enqueue_copy_image(queue, src, dest, **kwargs)
        if isinstance(src, Buffer):
            return enqueue_copy_buffer_to_image(queue, src, dest, **kwargs)
        pitches = _pitches(kwargs)
        return enqueue_write_image(queue, dest, kwargs.pop("origin", None),
                                   kwargs.pop("region", None), src, pitches, **kwargs)
    if isinstance(src, Image):
        if isinstance(dest, Buffer):
            return enqueue_copy_image_to_buffer(queue, src, dest, **kwargs)
        pitches = _pitches(kwargs)
        return enqueue_read_image(queue, src, kwargs.pop("origin", None),
                                  kwargs.pop("region", None), dest, pitches, **kwargs)
    return transfer.enqueue_copy(queue, dest, src, **kwargs)


# ---------------------------------------------------------------------- fill and map


def _saturate(values: np.ndarray, scale: float, low: int, high: int) -> np.ndarray:
    """Section 8.3.1.1: ``convert_<type>_sat_rte(value * scale)``, NaN to 0."""
    scaled = np.nan_to_num(values.astype(np.float32) * np.float32(scale), nan=0.0,
                           posinf=high, neginf=low)
    return np.clip(np.rint(scaled), low, high)


_STORED: dict[str, tuple[str, float | None, int, int]] = {  # numpy type, scale, low, high
    "SNORM_INT8": ("i1", 127.0, -128, 127), "SNORM_INT16": ("i2", 32767.0, -32768, 32767),
    "UNORM_INT8": ("u1", 255.0, 0, 255), "UNORM_INT16": ("u2", 65535.0, 0, 65535),
    "SIGNED_INT8": ("i1", None, -128, 127), "SIGNED_INT16": ("i2", None, -32768, 32767),
    "SIGNED_INT32": ("i4", None, -(1 << 31), (1 << 31) - 1),
    "UNSIGNED_INT8": ("u1", None, 0, 255), "UNSIGNED_INT16": ("u2", None, 0, 65535),
    "UNSIGNED_INT32": ("u4", None, 0, (1 << 32) - 1),
    "HALF_FLOAT": ("f2", None, 0, 0), "FLOAT": ("f4", None, 0, 0),
}


def encode_texel(format: ImageFormat, color: Any) -> np.ndarray:
    """The bytes of one texel of ``format`` holding ``color`` (r, g, b, a): floats for
    normalized, half and float types, integers for integer types, as ``write_image*``."""
    order = {v: k for k, v in image_formats.CHANNEL_ORDERS.items()}[format.channel_order]
    kind = channel_type.to_string(format.channel_data_type)
    rgba = np.asarray(color).reshape(-1)
    if rgba.size != 4:
        raise make_error("clEnqueueFillImage", "INVALID_VALUE",
                         f"the fill color has {rgba.size} components, not 4")
    channels = rgba[[int(c) for c in image_formats.CHANNEL_WRITE[order]]]
    dtype, scale, low, high = _STORED[kind]
    if scale is not None:
        stored = _saturate(channels, scale, low, high)
    elif kind in image_formats.INTEGER_CHANNEL_TYPES:
        stored = np.clip(channels.astype(np.int64), low, high)
    else:
        stored = channels.astype(np.float32)
    return np.ascontiguousarray(stored.astype(dtype)).view(np.uint8)


def enqueue_fill_image(queue: CommandQueue, mem: Image, color: Any, origin: Sequence[int],
                       region: Sequence[int], wait_for: Sequence[Event] | None = None) -> Event:
    routine = "clEnqueueFillImage"
    start, area = _image_region(queue, mem, origin, region, routine, "image")
    texel = encode_texel(mem.format, color)
    target = mem.region(start, area).reshape(area[2], area[1], area[0], texel.size)

    def fill(_keep: Image = mem) -> None:
        target[...] = texel

    return queue._enqueue(command_type.FILL_IMAGE, fill, wait_for, routine=routine, uses=(mem,))


def enqueue_map_image(queue: CommandQueue, img: Image, flags: int, origin: Sequence[int],
                      region: Sequence[int], shape: Any, dtype: Any, order: str = "C",
                      strides: Any = None, wait_for: Sequence[Event] | None = None,
                      is_blocking: bool = True) -> tuple[np.ndarray, Event, int, int]:
    """Map a region of ``img`` (zero copy) as an array of ``shape``/``dtype``; with no
    ``strides`` they follow the image's pitches. Returns (array, event, row_pitch,
    slice_pitch); unmap with ``ary.base.release()``."""
    routine = "clEnqueueMapImage"
    start, area = _image_region(queue, img, origin, region, routine, "image")
    check_map_flags(img, flags, routine)
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if strides is None:
        # the region's (z, y, x) axes with the image's pitches, then whatever of the texel
        # ``shape`` asks for beyond them (channels), contiguous
        pitches = (img.pitches[2], img.pitches[1], img.pitches[0])
        axes = [(n, p) for n, p in zip((area[2], area[1], area[0]), pitches) if n > 1]
        inner = shape[len(axes):]
        inner_strides = tuple(int(np.prod(inner[i + 1:], dtype=np.int64)) * dtype.itemsize
                              for i in range(len(inner)))
        strides = tuple(p for _, p in axes) + inner_strides
        if len(strides) != len(shape):
            raise make_error(routine, "INVALID_VALUE",
                             f"shape {shape} does not match the region {area}; pass strides")
    offset = start[2] * img.pitches[2] + start[1] * img.pitches[1] + start[0] * img.pitches[0]
    try:
        view = np.ndarray(shape, dtype=dtype, buffer=img.bytes_view(), offset=offset,
                          strides=strides, order=order)  # type: ignore[call-overload,arg-type]
    except (TypeError, ValueError) as error:
        raise make_error(routine, "INVALID_VALUE", f"cannot map the region as {shape} "
                                                   f"{dtype}: {error}") from error
    mapping = MemoryMap(queue, img, view)
    event = mapping.enqueue(command_type.MAP_IMAGE, wait_for, is_blocking, routine)
    return np.asarray(mapping), event, img.pitches[1], img.pitches[2]
