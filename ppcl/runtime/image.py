"""Images and samplers as PyOpenCL has them: ``ImageFormat``, ``Image``, ``Sampler``,
``get_supported_image_formats`` and ``image_from_array``.

An image's texels live in host-visible memory like a buffer's bytes, rows ``row_pitch`` bytes
apart and slices (or an array's layers) ``slice_pitch`` bytes apart. A kernel gets the address
of the image's descriptor (``IMAGE_DESCRIPTOR``: data pointer, extent and pitch of each axis,
channel order and type), which the image builtins read; the layers of an array are the axis
after the image's dimensions, so a region's origin and size are (x, y, z) for every kind of
image, as in ``clEnqueueReadImage``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ppcl.compiler.frontend import IMAGE_DESCRIPTOR, image_formats
from ppcl.runtime.constants import (
    addressing_mode,
    channel_order,
    channel_type,
    filter_mode,
    image_info,
    info_attributes,
    mem_flags,
    mem_object_type,
    sampler_info,
)
from ppcl.runtime.errors import integer_arg, is_integer, make_error
from ppcl.runtime.handles import Handle
from ppcl.runtime.memory import Buffer, MemoryObject, check_flags, host_bytes

if TYPE_CHECKING:
    from ppcl.runtime.context import Context

Triple = tuple[int, int, int]

_ORDER_NAMES = {code: name for name, code in image_formats.CHANNEL_ORDERS.items()}
_TYPE_NAMES = {code: name for name, code in image_formats.CHANNEL_TYPES.items()}

# image type -> (dimensions, is an array); the layers are the axis after the dimensions
_GEOMETRY: dict[int, tuple[int, bool]] = {
    mem_object_type.IMAGE1D: (1, False),
    mem_object_type.IMAGE1D_BUFFER: (1, False),
    mem_object_type.IMAGE1D_ARRAY: (1, True),
    mem_object_type.IMAGE2D: (2, False),
    mem_object_type.IMAGE2D_ARRAY: (2, True),
    mem_object_type.IMAGE3D: (3, False),
}
# the kernel type names (kernel signatures) of each image type
KERNEL_IMAGE_TYPES: dict[str, int] = {
    "image1d_t": mem_object_type.IMAGE1D,
    "image1d_buffer_t": mem_object_type.IMAGE1D_BUFFER,
    "image1d_array_t": mem_object_type.IMAGE1D_ARRAY,
    "image2d_t": mem_object_type.IMAGE2D,
    "image2d_array_t": mem_object_type.IMAGE2D_ARRAY,
    "image3d_t": mem_object_type.IMAGE3D,
}
# the device limits (device_info.IMAGE2D_MAX_WIDTH ... report the same)
MAX_2D = 16384
MAX_3D = 2048
MAX_ARRAY = 2048
MAX_BUFFER_TEXELS = 1 << 27

_NUMPY_OF_C = {"char *": "<u8", "size_t": "<u8", "int": "<i4"}
DESCRIPTOR_DTYPE = np.dtype([(name, _NUMPY_OF_C[ctype], (count,)) if count > 1
                             else (name, _NUMPY_OF_C[ctype]) for name, ctype, count
                             in IMAGE_DESCRIPTOR])


class ImageFormat:
    """``ImageFormat(channel_order, channel_type)``. Its two fields are its slots, as in
    PyOpenCL: a misspelt field (``fmt.channel_type = ...``) raises instead of being kept."""

    __slots__ = ("channel_order", "channel_data_type")

    def __init__(self, channel_order: int = 0, channel_type: int = 0) -> None:
        self.channel_order = int(channel_order)
        self.channel_data_type = int(channel_type)

    @property
    def channel_count(self) -> int:
        name = _ORDER_NAMES.get(self.channel_order)
        if name is None or name not in image_formats.CHANNEL_WRITE:
            raise make_error("ImageFormat", "INVALID_IMAGE_FORMAT_DESCRIPTOR",
                             f"channel order {self.channel_order:#x} is not supported")
        return len(image_formats.CHANNEL_WRITE[name])

    @property
    def dtype_size(self) -> int:
        name = _TYPE_NAMES.get(self.channel_data_type)
        if name is None or name not in image_formats.CHANNEL_BYTES:
            raise make_error("ImageFormat", "INVALID_IMAGE_FORMAT_DESCRIPTOR",
                             f"channel type {self.channel_data_type:#x} is not supported")
        return image_formats.CHANNEL_BYTES[name]

    @property
    def itemsize(self) -> int:
        return self.channel_count * self.dtype_size

    def is_supported(self) -> bool:
        order = _ORDER_NAMES.get(self.channel_order)
        kind = _TYPE_NAMES.get(self.channel_data_type)
        return kind in image_formats.SUPPORTED_FORMATS.get(order or "", ())

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ImageFormat) and self.channel_order == other.channel_order
                and self.channel_data_type == other.channel_data_type)

    def __hash__(self) -> int:
        return hash((self.channel_order, self.channel_data_type))

    def __repr__(self) -> str:
        order = channel_order.to_string(self.channel_order, "<unknown {}>")
        kind = channel_type.to_string(self.channel_data_type, "<unknown {}>")
        return f"ImageFormat({order}, {kind})"


def get_supported_image_formats(context: Context, flags: int,
                                image_type: int) -> list[ImageFormat]:
    """Every format an image of ``image_type`` may have on this context's devices."""
    if image_type not in _GEOMETRY:
        raise make_error("clGetSupportedImageFormats", "INVALID_VALUE",
                         f"{image_type:#x} is not an image type (mem_object_type.IMAGE2D ...)")
    check_flags(flags, "clGetSupportedImageFormats")
    return [ImageFormat(image_formats.CHANNEL_ORDERS[order], image_formats.CHANNEL_TYPES[kind])
            for order, kinds in image_formats.SUPPORTED_FORMATS.items() for kind in kinds]


def _image_type(shape: tuple[int, ...], is_array: bool, buffer: Buffer | None) -> int:
    routine = "clCreateImage"
    if buffer is not None and is_array:
        raise make_error(routine, "INVALID_VALUE", "'buffer' and 'is_array' are mutually "
                                                   "exclusive")
    if buffer is not None and len(shape) != 1:
        raise make_error(routine, "INVALID_VALUE", "an image on a buffer is one-dimensional: "
                                                   "shape=(width,)")
    kinds = {(1, False): mem_object_type.IMAGE1D, (2, False): mem_object_type.IMAGE2D,
             (3, False): mem_object_type.IMAGE3D, (2, True): mem_object_type.IMAGE1D_ARRAY,
             (3, True): mem_object_type.IMAGE2D_ARRAY}
    if buffer is not None:
        return mem_object_type.IMAGE1D_BUFFER
    kind = kinds.get((len(shape), is_array))
    if kind is None:
        raise make_error(routine, "INVALID_IMAGE_DESCRIPTOR",
                         f"shape {shape} with is_array={is_array} is no image (1 to 3 "
                         "dimensions; an array has 2 or 3)")
    return kind


def _check_extent(kind: int, extent: Triple) -> None:
    dims, layered = _GEOMETRY[kind]
    limit = MAX_3D if kind == mem_object_type.IMAGE3D else MAX_2D
    if kind == mem_object_type.IMAGE1D_BUFFER:
        limit = MAX_BUFFER_TEXELS
    for axis in range(dims):
        if not 0 < extent[axis] <= limit:
            raise make_error("clCreateImage", "INVALID_IMAGE_SIZE",
                             f"size {extent[axis]} along axis {axis} is outside 1..{limit}")
    if layered and not 0 < extent[dims] <= MAX_ARRAY:
        raise make_error("clCreateImage", "INVALID_IMAGE_SIZE",
                         f"array size {extent[dims]} is outside 1..{MAX_ARRAY}")


class _ImageInfo:
    """``Image.image``: each ``image_info`` value as an attribute, lower case."""

    def __init__(self, image: Image) -> None:
        self._image = image

    def __getattr__(self, name: str) -> Any:
        code = getattr(image_info, name.upper(), None)
        if not isinstance(code, int) or name.startswith("_"):
            raise AttributeError(f"image_info has no value '{name}'")
        return self._image.get_image_info(code)


class Image(MemoryObject):
    """``Image(ctx, flags, format, shape=None, pitches=None, hostbuf=None, is_array=False,
    buffer=None)`` as in PyOpenCL: ``shape`` is (width[, height[, depth]]), an array's layer
    count last; ``pitches`` are the host buffer's (row_pitch[, slice_pitch]) in bytes."""

    def __init__(self, context: Context, flags: int, format: ImageFormat,
                 shape: Sequence[int] | None = None, pitches: Sequence[int] | None = None,
                 hostbuf: Any = None, is_array: bool = False, buffer: Buffer | None = None) -> None:
        routine = "clCreateImage"
        check_flags(flags, routine)
        if not isinstance(format, ImageFormat) or not format.is_supported():
            raise make_error(routine, "IMAGE_FORMAT_NOT_SUPPORTED",
                             f"{format!r} is not supported (see get_supported_image_formats)")
        if shape is None:
            if hostbuf is None:
                raise make_error(routine, "INVALID_VALUE", "'shape' must be passed if "
                                                           "'hostbuf' is not given")
            shape = tuple(np.asarray(hostbuf).shape)
        if is_integer(shape):
            shape = (shape,)  # type: ignore[assignment]  # one integer: a 1D image's width
        dims_shape = tuple(integer_arg(routine, s, "entry of the shape") for s in shape)
        kind = _image_type(dims_shape, is_array, buffer)
        padded = dims_shape + (1, 1)
        extent: Triple = (padded[0], padded[1], padded[2])
        _check_extent(kind, extent)
        if hostbuf is None and pitches is not None:
            raise make_error(routine, "INVALID_VALUE", "'pitches' may only be given with "
                                                       "'hostbuf'")
        uses_host = bool(flags & (mem_flags.USE_HOST_PTR | mem_flags.COPY_HOST_PTR))
        if buffer is not None:
            _check_image_buffer(buffer, flags, hostbuf, routine)
        if (hostbuf is not None) != uses_host and buffer is None:
            raise make_error(routine, "INVALID_HOST_PTR",
                             "hostbuf needs USE_HOST_PTR or COPY_HOST_PTR, and they need it")
        self.format = format
        self.image_type = kind
        self.extent = extent
        element = format.itemsize
        tight = (element, extent[0] * element, extent[0] * extent[1] * element)
        from_host = host_pitches(pitches, extent, element, kind, routine)
        size = extent[2] * tight[2]
        super().__init__(context, flags, size)
        self.buffer = buffer
        if buffer is not None:
            buffer.check_live(routine)
            if size > buffer.size:
                raise make_error(routine, "INVALID_IMAGE_SIZE",
                                 f"{extent[0]} texels of {element} bytes do not fit the "
                                 f"buffer's {buffer.size} bytes")
            self._data = buffer.bytes_view()[:size]
            self._root = buffer._root if buffer._root is not None else buffer
            self._root.hold()  # the buffer's bytes stay while the image lives
            self.pitches = tight
        elif flags & mem_flags.USE_HOST_PTR:
            self.hostbuf = hostbuf
            host = host_bytes(hostbuf, routine=routine, writable=not flags & mem_flags.READ_ONLY)
            self._data = host
            self.pitches = from_host
            _check_host_extent(host, extent, from_host, routine)
        else:
            try:
                self._allocation = context.devices[0].backend.allocate(size)
            except (MemoryError, ValueError) as error:
                raise make_error(routine, "MEM_OBJECT_ALLOCATION_FAILURE", str(error)) from error
            self._data = self._allocation.array
            self.pitches = tight
            if hostbuf is not None:
                host = host_bytes(hostbuf, routine=routine, what="hostbuf")
                _check_host_extent(host, extent, from_host, routine)
                self.region((0, 0, 0), extent)[...] = texel_view(host, (0, 0, 0), extent,
                                                                 from_host, element)
        self._descriptor = np.zeros(1, dtype=DESCRIPTOR_DTYPE)
        d = self._descriptor[0]
        d["data"] = self.address
        d["extent"] = extent
        d["pitch"] = self.pitches
        d["order"] = format.channel_order
        d["type"] = format.channel_data_type
        d["channels"] = format.channel_count

    # ------------------------------------------------------------------ geometry

    @property
    def type(self) -> int:
        return self.image_type

    @property
    def descriptor_address(self) -> int:
        """What a kernel's image argument gets: the address of the descriptor."""
        return int(self._descriptor.ctypes.data)

    @property
    def dims(self) -> int:
        return _GEOMETRY[self.image_type][0]

    @property
    def is_array(self) -> bool:
        return _GEOMETRY[self.image_type][1]

    @property
    def shape(self) -> tuple[int, ...]:
        """(width[, height[, depth]]), an array's layer count last, as the image was made."""
        return self.extent[:self.dims + self.is_array]

    def region(self, origin: Triple, region: Triple) -> np.ndarray:
        """The texels of ``region`` at ``origin`` as a (z, y, x * element size) uint8 view."""
        return texel_view(self._data, origin, region, self.pitches, self.format.itemsize)

    def check_region(self, routine: str, origin: Triple, region: Triple, what: str) -> None:
        if min(origin) < 0 or min(region) <= 0 or any(
                o + r > e for o, r, e in zip(origin, region, self.extent)):
            raise make_error(routine, "INVALID_VALUE",
                             f"{what}: origin {origin} and region {region} are outside the "
                             f"image's extent {self.extent}")

    def get_image_info(self, param: int) -> Any:
        self.check_live("clGetImageInfo")
        dims, layered = self.dims, self.is_array
        values: dict[int, Any] = {
            image_info.FORMAT: self.format,
            image_info.ELEMENT_SIZE: self.format.itemsize,
            image_info.ROW_PITCH: self.pitches[1] if dims > 1 or not layered else (
                self.extent[0] * self.format.itemsize),
            image_info.SLICE_PITCH: self.pitches[2] if dims + layered == 3 else (
                self.pitches[1] if layered else 0),
            image_info.WIDTH: self.extent[0],
            image_info.HEIGHT: self.extent[1] if dims >= 2 else 0,
            image_info.DEPTH: self.extent[2] if dims == 3 else 0,
            image_info.ARRAY_SIZE: self.extent[dims] if layered else 0,
            image_info.BUFFER: self.buffer,
            image_info.NUM_MIP_LEVELS: 0,
            image_info.NUM_SAMPLES: 0,
        }
        if param not in values:
            raise make_error("clGetImageInfo", "INVALID_VALUE", f"unknown image_info {param}")
        return values[param]

    @property
    def image(self) -> _ImageInfo:
        """The image's ``image_info`` values by name (``img.image.depth``), as PyOpenCL's."""
        return _ImageInfo(self)

    @property
    def width(self) -> int:
        return int(self.get_image_info(image_info.WIDTH))

    @property
    def height(self) -> int:
        return int(self.get_image_info(image_info.HEIGHT))

    @property
    def depth(self) -> int:
        return int(self.get_image_info(image_info.DEPTH))

    @property
    def array_size(self) -> int:
        return int(self.get_image_info(image_info.ARRAY_SIZE))

    @property
    def element_size(self) -> int:
        return self.format.itemsize

    @property
    def num_mip_levels(self) -> int:
        return 0

    @property
    def num_samples(self) -> int:
        return 0

    @property
    def row_pitch(self) -> int:
        return int(self.get_image_info(image_info.ROW_PITCH))

    @property
    def slice_pitch(self) -> int:
        return int(self.get_image_info(image_info.SLICE_PITCH))

    def __repr__(self) -> str:
        kind = mem_object_type.to_string(self.image_type)
        return f"<ppcl.Image {kind} {self.shape} {self.format!r} at 0x{id(self):x}>"


def host_pitches(pitches: Sequence[int] | None, area: Triple, element: int, image_type: int,
                 routine: str) -> Triple:
    """The byte pitches of the (x, y, z) axes of host memory holding ``area`` texels, from
    the (row_pitch, slice_pitch) a caller gives (0 or missing: tightly packed). The layers of a
    1D image array are its y axis, ``slice_pitch`` apart, as ``clCreateImage`` has them."""
    given = [int(p) for p in (pitches or ())] + [0, 0]
    row = given[0] or area[0] * element
    layered_1d = image_type == mem_object_type.IMAGE1D_ARRAY
    slice_ = given[1] or (row if layered_1d else row * area[1])
    if row < area[0] * element or slice_ < (row if layered_1d else row * area[1]):
        raise make_error(routine, "INVALID_VALUE",
                         f"pitches ({row}, {slice_}) are too small for {area} texels of "
                         f"{element} bytes")
    if layered_1d:
        return element, slice_, slice_ * area[1]
    return element, row, slice_


def _check_image_buffer(buffer: Any, flags: int, hostbuf: Any, routine: str) -> None:
    """An image on a buffer has the buffer's bytes: section 5.3.1 forbids host memory for
    it, which would otherwise be ignored without a word (ALLOC_HOST_PTR, forbidden too but
    harmless, passes as pocl lets it)."""
    if not isinstance(buffer, Buffer):
        raise make_error(routine, "INVALID_IMAGE_DESCRIPTOR",
                         f"'buffer' must be a Buffer, not {type(buffer).__name__}")
    if hostbuf is not None or flags & (mem_flags.USE_HOST_PTR | mem_flags.COPY_HOST_PTR):
        raise make_error(routine, "INVALID_VALUE",
                         "an image on a buffer takes no 'hostbuf', USE_HOST_PTR or "
                         "COPY_HOST_PTR: it has the buffer's bytes (write the buffer)")


def _check_host_extent(host: np.ndarray, extent: Triple, pitches: Triple, routine: str) -> None:
    needed = (extent[2] - 1) * pitches[2] + (extent[1] - 1) * pitches[1] + extent[0] * pitches[0]
    if host.size < needed:
        raise make_error(routine, "INVALID_HOST_PTR",
                         f"the host buffer has {host.size} bytes; the image needs {needed}")


def texel_view(data: np.ndarray, origin: Triple, region: Triple, pitches: Triple,
               element: int) -> np.ndarray:
    """The (z, y, x * element) uint8 view of ``region`` at ``origin`` of bytes laid out with
    ``pitches`` (element, row, slice)."""
    start = origin[2] * pitches[2] + origin[1] * pitches[1] + origin[0] * element
    return np.lib.stride_tricks.as_strided(
        data[start:], shape=(region[2], region[1], region[0] * element),
        strides=(pitches[2], pitches[1], 1))


def create_image(context: Context, flags: int, format: ImageFormat,
                 shape: Sequence[int] | None = None, pitches: Sequence[int] | None = None,
                 hostbuf: Any = None, is_array: bool = False,
                 buffer: Buffer | None = None) -> Image:
    """PyOpenCL's ``create_image``: the function spelling of ``Image(...)`` with the same
    arguments, which image programs written for PyOpenCL 2022 and later call."""
    return Image(context, flags, format, shape=shape, pitches=pitches, hostbuf=hostbuf,
                 is_array=is_array, buffer=buffer)


def image_from_array(context: Context, ary: np.ndarray, num_channels: int | None = None,
                     mode: str = "r", norm_int: bool = False) -> Image:
    """An image holding ``ary`` (C-contiguous; its last axis the channels when
    ``num_channels`` > 1), read-only (``mode="r"``) or write-only (``"w"``), as PyOpenCL's."""
    routine = "image_from_array"
    if not ary.flags.c_contiguous:
        raise make_error(routine, "INVALID_VALUE", "the array must be C-contiguous")
    dtype = ary.dtype
    if num_channels is None:
        num_channels = 1
        if dtype.fields is not None and len(dtype.fields) in (2, 4):  # cltypes vectors
            fields = list(dtype.fields.values())
            num_channels, dtype = len(fields), fields[0][0]
        shape, strides = ary.shape, ary.strides
    elif num_channels == 1:
        shape, strides = ary.shape, ary.strides
    else:
        if ary.shape[-1] != num_channels:
            raise make_error(routine, "INVALID_VALUE",
                             f"the last axis has {ary.shape[-1]} entries, not {num_channels} "
                             "channels")
        shape, strides = ary.shape[:-1], ary.strides[:-1]
    modes = {"r": mem_flags.READ_ONLY, "w": mem_flags.WRITE_ONLY}
    if mode not in modes:
        raise make_error(routine, "INVALID_VALUE", f"mode {mode!r} is not 'r' or 'w'")
    orders = {count: image_formats.CHANNEL_ORDERS[name]
              for count, name in ((1, "R"), (2, "RG"), (4, "RGBA"))}
    if num_channels not in orders:
        raise make_error(routine, "IMAGE_FORMAT_NOT_SUPPORTED",
                         f"{num_channels} channels: ppcl images have 1, 2 or 4")
    table = _NORM_CHANNEL_TYPES if norm_int else _CHANNEL_TYPES
    kind = table.get(np.dtype(dtype).str[1:])
    if kind is None:
        raise make_error(routine, "IMAGE_FORMAT_NOT_SUPPORTED",
                         f"no image channel type holds dtype {dtype}")
    return Image(context, modes[mode] | mem_flags.COPY_HOST_PTR,
                 ImageFormat(orders[num_channels], kind), shape=shape[::-1],
                 pitches=strides[::-1][1:], hostbuf=ary)


_CHANNEL_TYPES = {dtype: image_formats.CHANNEL_TYPES[name] for dtype, name in (
    ("f4", "FLOAT"), ("f2", "HALF_FLOAT"), ("i1", "SIGNED_INT8"), ("i2", "SIGNED_INT16"),
    ("i4", "SIGNED_INT32"), ("u1", "UNSIGNED_INT8"), ("u2", "UNSIGNED_INT16"),
    ("u4", "UNSIGNED_INT32"))}
_NORM_CHANNEL_TYPES = {dtype: image_formats.CHANNEL_TYPES[name] for dtype, name in (
    ("i1", "SNORM_INT8"), ("i2", "SNORM_INT16"), ("u1", "UNORM_INT8"), ("u2", "UNORM_INT16"))}

# ---------------------------------------------------------------------- samplers

_ADDRESSING_BITS = {
    addressing_mode.NONE: "CLK_ADDRESS_NONE",
    addressing_mode.CLAMP_TO_EDGE: "CLK_ADDRESS_CLAMP_TO_EDGE",
    addressing_mode.CLAMP: "CLK_ADDRESS_CLAMP",
    addressing_mode.REPEAT: "CLK_ADDRESS_REPEAT",
    addressing_mode.MIRRORED_REPEAT: "CLK_ADDRESS_MIRRORED_REPEAT",
}
# section 6.12.14.1: these modes address only normalized coordinates
_NORMALIZED_ONLY = (addressing_mode.REPEAT, addressing_mode.MIRRORED_REPEAT)
_FILTER_BITS = {filter_mode.NEAREST: "CLK_FILTER_NEAREST",
                filter_mode.LINEAR: "CLK_FILTER_LINEAR"}


@info_attributes(sampler_info,
                 own=("addressing_mode", "context", "filter_mode", "normalized_coords"))
class Sampler(Handle):
    """``Sampler(ctx, normalized_coords, addressing_mode, filter_mode)``."""

    def __init__(self, context: Context, normalized_coords: bool, addressing_mode: int,
                 filter_mode: int) -> None:
        routine = "clCreateSampler"
        if addressing_mode not in _ADDRESSING_BITS:
            raise make_error(routine, "INVALID_VALUE",
                             f"{addressing_mode!r} is not an addressing_mode")
        if filter_mode not in _FILTER_BITS:
            raise make_error(routine, "INVALID_VALUE", f"{filter_mode!r} is not a filter_mode")
        if not normalized_coords and addressing_mode in _NORMALIZED_ONLY:
            raise make_error(routine, "INVALID_VALUE",
                             f"{_ADDRESSING_BITS[addressing_mode]} needs normalized "
                             "coordinates (section 6.12.14.1)")
        self.context = context
        self.normalized_coords = bool(normalized_coords)
        self.addressing_mode = int(addressing_mode)
        self.filter_mode = int(filter_mode)
        bits = image_formats.SAMPLER_BITS
        self.bits = (bits["CLK_NORMALIZED_COORDS_TRUE"] if normalized_coords else 0) \
            | bits[_ADDRESSING_BITS[addressing_mode]] | bits[_FILTER_BITS[filter_mode]]

    def get_info(self, param: int) -> Any:
        values: dict[int, Any] = {
            sampler_info.REFERENCE_COUNT: 1,
            sampler_info.CONTEXT: self.context,
            sampler_info.NORMALIZED_COORDS: self.normalized_coords,
            sampler_info.ADDRESSING_MODE: self.addressing_mode,
            sampler_info.FILTER_MODE: self.filter_mode,
        }
        if param not in values:
            raise make_error("clGetSamplerInfo", "INVALID_VALUE", f"unknown sampler_info {param}")
        return values[param]



    def __repr__(self) -> str:
        return (f"<ppcl.Sampler normalized={self.normalized_coords} "
                f"{addressing_mode.to_string(self.addressing_mode)} "
                f"{filter_mode.to_string(self.filter_mode)}>")
