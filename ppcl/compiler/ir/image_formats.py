"""The facts of OpenCL 1.2 images that kernels and the host share (sections 5.3 and 6.12.14).

The ``CL_*``/``CLK_*`` codes of channel orders and channel data types (one set of values on
both sides: ``get_image_channel_order`` returns the host's ``channel_order`` code), the bits a
sampler is made of, how many bytes a channel of each type takes, how each channel order maps
its stored channels to (r, g, b, a) and back, and which formats ppcl's devices support.
"""

from __future__ import annotations

# §6.12.14.1: a sampler is these bits or-ed together (clang's values)
SAMPLER_BITS: dict[str, int] = {
    "CLK_NORMALIZED_COORDS_FALSE": 0, "CLK_NORMALIZED_COORDS_TRUE": 1,
    "CLK_ADDRESS_NONE": 0, "CLK_ADDRESS_CLAMP_TO_EDGE": 2, "CLK_ADDRESS_CLAMP": 4,
    "CLK_ADDRESS_REPEAT": 6, "CLK_ADDRESS_MIRRORED_REPEAT": 8,
    "CLK_FILTER_NEAREST": 0x10, "CLK_FILTER_LINEAR": 0x20,
}

CHANNEL_ORDERS: dict[str, int] = {
    "R": 0x10B0, "A": 0x10B1, "RG": 0x10B2, "RA": 0x10B3, "RGB": 0x10B4, "RGBA": 0x10B5,
    "BGRA": 0x10B6, "ARGB": 0x10B7, "INTENSITY": 0x10B8, "LUMINANCE": 0x10B9, "Rx": 0x10BA,
    "RGx": 0x10BB, "RGBx": 0x10BC,
}

CHANNEL_TYPES: dict[str, int] = {
    "SNORM_INT8": 0x10D0, "SNORM_INT16": 0x10D1, "UNORM_INT8": 0x10D2, "UNORM_INT16": 0x10D3,
    "UNORM_SHORT_565": 0x10D4, "UNORM_SHORT_555": 0x10D5, "UNORM_INT_101010": 0x10D6,
    "SIGNED_INT8": 0x10D7, "SIGNED_INT16": 0x10D8, "SIGNED_INT32": 0x10D9,
    "UNSIGNED_INT8": 0x10DA, "UNSIGNED_INT16": 0x10DB, "UNSIGNED_INT32": 0x10DC,
    "HALF_FLOAT": 0x10DD, "FLOAT": 0x10DE,
}

# bytes of one channel of each supported data type (the packed 565/555/101010 types are not)
CHANNEL_BYTES: dict[str, int] = {
    "SNORM_INT8": 1, "SNORM_INT16": 2, "UNORM_INT8": 1, "UNORM_INT16": 2, "SIGNED_INT8": 1,
    "SIGNED_INT16": 2, "SIGNED_INT32": 4, "UNSIGNED_INT8": 1, "UNSIGNED_INT16": 2,
    "UNSIGNED_INT32": 4, "HALF_FLOAT": 2, "FLOAT": 4,
}
INTEGER_CHANNEL_TYPES = ("SIGNED_INT8", "SIGNED_INT16", "SIGNED_INT32", "UNSIGNED_INT8",
                         "UNSIGNED_INT16", "UNSIGNED_INT32")

# §8.3: the stored channel each of r, g, b, a reads ("z": 0, "o": 1 or 1.0f) per order
CHANNEL_READ: dict[str, str] = {
    "R": "0zzo", "Rx": "0zzo", "A": "zzz0", "RG": "01zo", "RGx": "01zo", "RA": "0zz1",
    "RGBA": "0123", "BGRA": "2103", "ARGB": "1230", "INTENSITY": "0000", "LUMINANCE": "000o",
}
# the component (0 r, 1 g, 2 b, 3 a) each stored channel takes on a write; its length is the
# order's channel count
CHANNEL_WRITE: dict[str, str] = {
    "R": "0", "Rx": "0", "A": "3", "RG": "01", "RGx": "01", "RA": "03", "RGBA": "0123",
    "BGRA": "2103", "ARGB": "3012", "INTENSITY": "0", "LUMINANCE": "0",
}
# §8.2: orders whose border color is (0, 0, 0, 0); the others' is (0, 0, 0, 1)
ALPHA_BORDER_ORDERS = ("A", "INTENSITY", "Rx", "RA", "RGx", "RGBx", "ARGB", "BGRA", "RGBA")

_ALL_TYPES = tuple(CHANNEL_BYTES)
_EIGHT_BIT = ("UNORM_INT8", "SNORM_INT8", "SIGNED_INT8", "UNSIGNED_INT8")
_NORMALIZED_OR_FLOAT = ("UNORM_INT8", "UNORM_INT16", "SNORM_INT8", "SNORM_INT16", "HALF_FLOAT",
                        "FLOAT")

# section 5.3.2.1's formats (and more): channel order -> the data types it supports
SUPPORTED_FORMATS: dict[str, tuple[str, ...]] = {
    "R": _ALL_TYPES, "A": _ALL_TYPES, "RG": _ALL_TYPES, "RA": _ALL_TYPES, "RGBA": _ALL_TYPES,
    "BGRA": _EIGHT_BIT, "ARGB": _EIGHT_BIT, "INTENSITY": _NORMALIZED_OR_FLOAT,
    "LUMINANCE": _NORMALIZED_OR_FLOAT,
}
