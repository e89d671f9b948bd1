"""Images and samplers (OpenCL 1.2 sections 5.3, 5.5, 6.12.14 and 8), checked against numpy.

The reference below is written from the specification, not from ppcl's code: section 8.2's
addressing and filtering formulas for every addressing mode, nearest and linear filtering,
normalized and unnormalized coordinates, on every image type; section 8.3's conversions for
every supported channel order and data type, reading and writing. Where pocl is installed
(pyopencl with ``OCL_ICD_VENDORS=/etc/OpenCL/vendors``) the same kernels run there too and
must agree (the ``pocl`` fixture of ``conftest.py``). The host API has
``test_conf_images_host.py``.
"""

from __future__ import annotations

import warnings
import zlib
from typing import Any

import numpy as np
import pytest

import ppcl as cl

f32 = np.float32

# ---------------------------------------------------------------------- the reference

NONE, EDGE, CLAMP, REPEAT, MIRROR = ("NONE", "CLAMP_TO_EDGE", "CLAMP", "REPEAT",
                                     "MIRRORED_REPEAT")

# section 8.3, table of channel orders: which stored channel r, g, b, a read; z = 0, o = 1
READ_MAP = {"R": "0zzo", "A": "zzz0", "RG": "01zo", "RA": "0zz1", "RGBA": "0123",
            "BGRA": "2103", "ARGB": "1230", "INTENSITY": "0000", "LUMINANCE": "000o"}
CHANNELS = {"R": 1, "A": 1, "RG": 2, "RA": 2, "RGBA": 4, "BGRA": 4, "ARGB": 4, "INTENSITY": 1,
            "LUMINANCE": 1}
STORAGE = {"SNORM_INT8": np.int8, "SNORM_INT16": np.int16, "UNORM_INT8": np.uint8,
           "UNORM_INT16": np.uint16, "SIGNED_INT8": np.int8, "SIGNED_INT16": np.int16,
           "SIGNED_INT32": np.int32, "UNSIGNED_INT8": np.uint8, "UNSIGNED_INT16": np.uint16,
           "UNSIGNED_INT32": np.uint32, "HALF_FLOAT": np.float16, "FLOAT": np.float32}
NORM_SCALE = {"SNORM_INT8": 127.0, "SNORM_INT16": 32767.0, "UNORM_INT8": 255.0,
              "UNORM_INT16": 65535.0}
SIGNED = ("SIGNED_INT8", "SIGNED_INT16", "SIGNED_INT32")
UNSIGNED = ("UNSIGNED_INT8", "UNSIGNED_INT16", "UNSIGNED_INT32")
ALPHA_ORDERS = ("A", "INTENSITY", "RA", "ARGB", "BGRA", "RGBA")  # border (0, 0, 0, 0)


def is_integer(kind: str) -> bool:
    return kind in SIGNED or kind in UNSIGNED


def decode(order: str, kind: str, raw: np.ndarray) -> np.ndarray:
    """Section 8.3.1: stored texels (..., channels) as (..., 4) float32 (normalized, half and
    float types) or int64 (integer types), mapped to (r, g, b, a) by the channel order."""
    if kind in NORM_SCALE:
        values = raw.astype(f32) / f32(NORM_SCALE[kind])
        if kind.startswith("SNORM"):
            values = np.maximum(values, f32(-1.0))
        one: Any = f32(1.0)
    elif is_integer(kind):
        values, one = raw.astype(np.int64), 1
    else:
        values, one = raw.astype(f32), f32(1.0)
    parts = []
    for src in READ_MAP[order]:
        if src == "z":
            parts.append(np.zeros(values.shape[:-1], values.dtype))
        elif src == "o":
            parts.append(np.full(values.shape[:-1], one, values.dtype))
        else:
            parts.append(values[..., int(src)])
    return np.stack(parts, axis=-1)


def border(order: str, kind: str) -> np.ndarray:
    """Section 8.2: (0, 0, 0, 0) for orders with alpha, else (0, 0, 0, 1)."""
    alpha = 0 if order in ALPHA_ORDERS else 1
    return np.array([0, 0, 0, alpha], dtype=np.int64 if is_integer(kind) else f32)


def axis(s: np.ndarray, n: int, norm: bool, mode: str, linear: bool):
    """Section 8.2 for one coordinate: texel indices i0, i1 and weight a."""
    nf = f32(n)
    if norm and mode == REPEAT:
        u = (s - np.floor(s)) * nf
    elif norm and mode == MIRROR:
        u = np.abs(s - f32(2.0) * np.rint(f32(0.5) * s)) * nf
    else:
        u = s * nf if norm else s
    if not linear:
        i = np.floor(u).astype(np.int64)
        if norm and mode == REPEAT:
            i = np.where(i > n - 1, i - n, i)
        elif norm and mode == MIRROR:
            i = np.minimum(i, n - 1)
        elif mode == EDGE:
            i = np.clip(i, 0, n - 1)
        elif mode == CLAMP:
            i = np.clip(i, -1, n)
        return i, i, np.zeros_like(s)
    t = u - f32(0.5)
    i0 = np.floor(t).astype(np.int64)
    i1 = i0 + 1
    a = (t - np.floor(t)).astype(f32)
    if norm and mode == REPEAT:
        i0 = np.where(i0 < 0, i0 + n, i0)
        i1 = np.where(i1 > n - 1, i1 - n, i1)
    elif norm and mode == MIRROR:
        i0, i1 = np.maximum(i0, 0), np.minimum(i1, n - 1)
    elif mode == EDGE:
        i0, i1 = np.clip(i0, 0, n - 1), np.clip(i1, 0, n - 1)
    elif mode == CLAMP:
        i0, i1 = np.clip(i0, -1, n), np.clip(i1, -1, n)
    return i0, i1, a


def fetch(texels: np.ndarray, edge: np.ndarray, at: list[np.ndarray]) -> np.ndarray:
    """Texels (z, y, x, 4) at indices (x, y, z); the border color outside."""
    depth, height, width = texels.shape[:3]
    i, j, k = at
    inside = (i >= 0) & (i < width) & (j >= 0) & (j < height) & (k >= 0) & (k < depth)
    got = texels[np.clip(k, 0, depth - 1), np.clip(j, 0, height - 1), np.clip(i, 0, width - 1)]
    return np.where(inside[:, None], got, edge)


def sample(texels: np.ndarray, edge: np.ndarray, coords: np.ndarray, axes: int, layered: bool,
           norm: bool, mode: str, linear: bool) -> np.ndarray:
    """``read_imagef(image, sampler, coords)`` by section 8.2 over texels (z, y, x, 4)."""
    extent = (texels.shape[2], texels.shape[1], texels.shape[0])
    n = coords.shape[0]
    lo = [np.zeros(n, np.int64) for _ in range(3)]
    hi = [np.zeros(n, np.int64) for _ in range(3)]
    weights = [np.zeros(n, f32) for _ in range(3)]
    for d in range(axes):
        lo[d], hi[d], weights[d] = axis(coords[:, d], extent[d], norm, mode, linear)
    if layered:
        layer = np.clip(np.rint(coords[:, axes]), 0, extent[axes] - 1).astype(np.int64)
        lo[axes] = hi[axes] = layer
    if not linear:
        return fetch(texels, edge, lo)
    result = np.zeros((n, 4), f32)
    for corner in range(1 << axes):
        w = np.ones(n, f32)
        at = list(lo)
        for d in range(axes):
            high = (corner >> d) & 1
            w = w * (weights[d] if high else f32(1.0) - weights[d])
            if high:
                at[d] = hi[d]
        result = result + w[:, None] * fetch(texels, edge, at)
    return result


# ---------------------------------------------------------------------- running kernels

# image type -> (cl shape of (width, height, depth, layers), is_array, axes, layered,
#               coordinate width, the coordinate's swizzle)
GEOMETRY = {
    "image1d_t": (lambda w, h, d, n: (w,), False, 1, False, 1, ".x"),
    "image1d_array_t": (lambda w, h, d, n: (w, n), True, 1, True, 2, ".xy"),
    "image2d_t": (lambda w, h, d, n: (w, h), False, 2, False, 2, ".xy"),
    "image2d_array_t": (lambda w, h, d, n: (w, h, n), True, 2, True, 4, ""),
    "image3d_t": (lambda w, h, d, n: (w, h, d), False, 3, False, 4, ""),
}
SIZES = (5, 4, 3, 3)  # width, height, depth, layers: small, and different on every axis


def texel_block(image_type: str) -> tuple[int, int, int]:
    """(z, y, x) of the texel block behind an image of ``image_type``."""
    shape, _, axes, layered, _, _ = GEOMETRY[image_type]
    ext = list(shape(*SIZES)) + [1, 1]
    return ext[2], ext[1], ext[0]


def sampling_source(image_type: str, read: str = "read_imagef", out_type: str = "float4") -> str:
    swizzle = GEOMETRY[image_type][5]
    return f"""
__kernel void sample(__read_only {image_type} img, sampler_t s,
                     __global const float4 *coords, __global {out_type} *out)
{{
    size_t i = get_global_id(0);
    float4 c = coords[i];
    out[i] = {read}(img, s, c{swizzle});
}}
"""


def make_image(api: Any, ctx: Any, image_type: str, order: str, kind: str,
               raw: np.ndarray, flags: int | None = None) -> Any:
    shape, is_array, *_ = GEOMETRY[image_type]
    fmt = api.ImageFormat(getattr(api.channel_order, order), getattr(api.channel_type, kind))
    mf = api.mem_flags
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pyopencl's non-descriptor form
        return api.Image(ctx, (mf.READ_ONLY if flags is None else flags) | mf.COPY_HOST_PTR,
                         fmt, shape=shape(*SIZES), hostbuf=np.ascontiguousarray(raw),
                         is_array=is_array)


def run_sampling(api: Any, ctx: Any, queue: Any, image_type: str, order: str, kind: str,
                 raw: np.ndarray, coords: np.ndarray, norm: bool, mode: str, linear: bool,
                 read: str = "read_imagef") -> np.ndarray:
    out_type = {"read_imagef": "float4", "read_imagei": "int4", "read_imageui": "uint4"}[read]
    dtype = {"float4": f32, "int4": np.int32, "uint4": np.uint32}[out_type]
    prg = api.Program(ctx, sampling_source(image_type, read, out_type)).build()
    image = make_image(api, ctx, image_type, order, kind, raw)
    sampler = api.Sampler(ctx, norm, getattr(api.addressing_mode, mode),
                          api.filter_mode.LINEAR if linear else api.filter_mode.NEAREST)
    mf = api.mem_flags
    coords_buf = api.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=coords)
    out = np.zeros((coords.shape[0], 4), dtype)
    out_buf = api.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.sample(queue, (coords.shape[0],), None, image, sampler, coords_buf, out_buf)
    api.enqueue_copy(queue, out, out_buf)
    queue.finish()
    return out


def coordinates(image_type: str, norm: bool, mode: str, linear: bool,
                rng: np.random.Generator) -> np.ndarray:
    """Random coordinates over and beyond the image, plus every half texel on the way; for
    CLK_ADDRESS_NONE only where the result is defined (inside, linear taps inside too)."""
    _, _, axes, layered, _, _ = GEOMETRY[image_type]
    block = texel_block(image_type)
    extent = (block[2], block[1], block[0])
    count = 96
    coords = np.zeros((count, 4), f32)
    for d in range(axes):
        n = extent[d]
        if mode == NONE:
            lo, hi = (0.5, n - 0.5) if linear else (0.0, n - 1e-3)
        else:
            lo, hi = (-1.5 * n, 2.5 * n) if norm else (-2.0, n + 2.0)
        values = rng.uniform(lo, hi, count).astype(f32)
        grid = np.arange(lo, hi, 0.5, dtype=f32)[:count // 2]  # exact texel edges and centres
        values[:grid.size] = grid
        coords[:, d] = values / f32(n) if norm else values
    if layered:
        coords[:, axes] = rng.uniform(-1.0, extent[axes] + 0.4, count).astype(f32)
    return coords


def pocl_supports(pocl: tuple[Any, Any, Any], order: str, kind: str) -> bool:
    api, context, _ = pocl
    formats = api.get_supported_image_formats(context, api.mem_flags.READ_ONLY,
                                              api.mem_object_type.IMAGE2D)
    return any(f.channel_order == getattr(api.channel_order, order)
               and f.channel_data_type == getattr(api.channel_type, kind) for f in formats)


# ---------------------------------------------------------------------- sampling

MODES_UNNORMALIZED = (NONE, EDGE, CLAMP)  # REPEAT and MIRRORED_REPEAT need normalized coords
COMBINATIONS = [(norm, mode, linear) for norm in (False, True)
                for mode in ((NONE, EDGE, CLAMP, REPEAT, MIRROR) if norm else MODES_UNNORMALIZED)
                for linear in (False, True)]


def _name(c: tuple[bool, str, bool]) -> str:
    return f"{'norm' if c[0] else 'unnorm'}-{c[1]}-{'linear' if c[2] else 'nearest'}"


@pytest.mark.parametrize("combo", COMBINATIONS, ids=[_name(c) for c in COMBINATIONS])
@pytest.mark.parametrize("image_type", list(GEOMETRY))
def test_sampler_addressing_and_filtering(ctx, queue, pocl, image_type, combo) -> None:
    norm, mode, linear = combo
    rng = np.random.default_rng(zlib.crc32(f"{image_type} {combo}".encode()))
    block = texel_block(image_type)
    raw = rng.uniform(-4.0, 4.0, block + (4,)).astype(f32)
    coords = coordinates(image_type, norm, mode, linear, rng)
    _, _, axes, layered, _, _ = GEOMETRY[image_type]
    expected = sample(decode("RGBA", "FLOAT", raw), border("RGBA", "FLOAT"), coords, axes,
                      layered, norm, mode, linear)
    got = run_sampling(cl, ctx, queue, image_type, "RGBA", "FLOAT", raw, coords, norm, mode,
                       linear)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    # pocl (3.1, CPU) departs from section 6.12.14.2 on arrays: it reads layer 0 of a 1D image
    # array whatever the layer coordinate, and scales a 2D array's layer coordinate by the
    # array size when coordinates are normalized (the layer is clamp(rint(coord.z), 0, n - 1)
    # in both modes); everywhere else it must agree
    pocl_departs = image_type == "image1d_array_t" or (image_type == "image2d_array_t" and norm)
    if pocl is not None and not pocl_departs:
        theirs = run_sampling(*pocl, image_type, "RGBA", "FLOAT", raw, coords, norm, mode, linear)
        np.testing.assert_allclose(got, theirs, rtol=2e-5, atol=2e-5)


# BGRA holds 8-bit channels only (section 5.3.2.1)
FILTERED_FORMATS = [(order, kind) for order in ("R", "RA", "BGRA", "INTENSITY", "LUMINANCE")
                    for kind in ("UNORM_INT8", "SNORM_INT16", "HALF_FLOAT")
                    if order != "BGRA" or kind == "UNORM_INT8"]


@pytest.mark.parametrize(("order", "kind"), FILTERED_FORMATS,
                         ids=[f"{o}-{k}" for o, k in FILTERED_FORMATS])
def test_linear_filtering_of_converted_formats(ctx, queue, pocl, order, kind) -> None:
    rng = np.random.default_rng(11)
    block = texel_block("image2d_t")
    raw = random_texels(rng, block, order, kind)
    coords = coordinates("image2d_t", True, CLAMP, True, rng)
    expected = sample(decode(order, kind, raw), border(order, kind), coords, 2, False, True,
                      CLAMP, True)
    got = run_sampling(cl, ctx, queue, "image2d_t", order, kind, raw, coords, True, CLAMP, True)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    # pocl (3.1) borders every order with (0, 0, 0, 0); section 8.2 gives R and LUMINANCE an
    # alpha of 1, so only the orders with alpha are compared with it
    if pocl is not None and order in ALPHA_ORDERS and pocl_supports(pocl, order, kind):
        theirs = run_sampling(*pocl, "image2d_t", order, kind, raw, coords, True, CLAMP, True)
        np.testing.assert_allclose(got, theirs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", SIGNED + UNSIGNED)
def test_integer_reads_through_a_sampler_clamp_to_border(ctx, queue, kind) -> None:
    read = "read_imagei" if kind in SIGNED else "read_imageui"
    rng = np.random.default_rng(5)
    block = texel_block("image2d_t")
    raw = random_texels(rng, block, "RG", kind)
    for mode in (CLAMP, EDGE):
        coords = coordinates("image2d_t", False, mode, False, rng)
        expected = sample(decode("RG", kind, raw).astype(np.float64), border("RG", kind),
                          coords, 2, False, False, mode, False)
        got = run_sampling(cl, ctx, queue, "image2d_t", "RG", kind, raw, coords, False, mode,
                           False, read)
        np.testing.assert_array_equal(got.astype(np.int64), expected.astype(np.int64))


def test_coordinates_at_infinity_and_far_outside(ctx, queue) -> None:
    """Section 8.2's clamps at +-inf and 1e30: CLAMP_TO_EDGE reads the edge texel and CLAMP
    the border color, with nearest and linear filtering. A linear weight of inf - floor(inf)
    is NaN, which gave NaN for every channel; pocl (3.1) converts 1e30 to an int that wraps
    and reads the wrong edge, so the reference is the texels themselves."""
    raw = np.arange(20 * 4, dtype=f32).reshape(1, 4, 5, 4)[0]  # 5 x 4 RGBA texels
    coords = np.zeros((4, 4), f32)
    coords[:, 0] = [np.inf, 1e30, -np.inf, -1e30]
    coords[:, 1] = 1.5  # the middle of row 1
    right, left = raw[1, 4], raw[1, 0]
    edges = np.array([right, right, left, left])
    for linear in (False, True):
        got = run_sampling(cl, ctx, queue, "image2d_t", "RGBA", "FLOAT", raw, coords, False,
                           EDGE, linear)
        np.testing.assert_array_equal(got, edges)
        got = run_sampling(cl, ctx, queue, "image2d_t", "RGBA", "FLOAT", raw, coords, False,
                           CLAMP, linear)
        np.testing.assert_array_equal(got, np.zeros((4, 4), f32))


# ---------------------------------------------------------------------- formats


def supported_formats() -> list[tuple[str, str]]:
    found = []
    for fmt in cl.get_supported_image_formats(cl.create_some_context(interactive=False),
                                              cl.mem_flags.READ_WRITE,
                                              cl.mem_object_type.IMAGE2D):
        found.append((cl.channel_order.to_string(fmt.channel_order),
                      cl.channel_type.to_string(fmt.channel_data_type)))
    return found


FORMATS = supported_formats()


def random_texels(rng: np.random.Generator, block: tuple[int, int, int], order: str,
                  kind: str) -> np.ndarray:
    dtype = np.dtype(STORAGE[kind])
    shape = block + (CHANNELS[order],)
    if dtype.kind == "f":
        return rng.uniform(-3.0, 3.0, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


READ_KERNELS = """
__kernel void read_f(__read_only image2d_t img, __global float4 *out)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * get_image_width(img) + p.x] = read_imagef(img, p);
}
__kernel void read_i(__read_only image2d_t img, __global int4 *out)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * get_image_width(img) + p.x] = read_imagei(img, p);
}
__kernel void read_ui(__read_only image2d_t img, __global uint4 *out)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    out[p.y * get_image_width(img) + p.x] = read_imageui(img, p);
}
__kernel void write_f(__write_only image2d_t img, __global const float4 *in)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(img, p, in[p.y * get_image_width(img) + p.x]);
}
__kernel void write_i(__write_only image2d_t img, __global const int4 *in)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagei(img, p, in[p.y * get_image_width(img) + p.x]);
}
__kernel void write_ui(__write_only image2d_t img, __global const uint4 *in)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imageui(img, p, in[p.y * get_image_width(img) + p.x]);
}
"""


def _suffix(kind: str) -> str:
    return "i" if kind in SIGNED else ("ui" if kind in UNSIGNED else "f")


@pytest.fixture(scope="module")
def format_program(ctx):
    return cl.Program(ctx, READ_KERNELS).build()


@pytest.mark.parametrize(("order", "kind"), FORMATS, ids=[f"{o}-{k}" for o, k in FORMATS])
def test_read_converts_every_format(ctx, queue, format_program, order, kind) -> None:
    rng = np.random.default_rng(3)
    block = texel_block("image2d_t")
    raw = random_texels(rng, block, order, kind)
    image = make_image(cl, ctx, "image2d_t", order, kind, raw)
    suffix = _suffix(kind)
    dtype = {"f": f32, "i": np.int32, "ui": np.uint32}[suffix]
    out = np.zeros(block[1:] + (4,), dtype)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    getattr(format_program, f"read_{suffix}")(queue, (block[2], block[1]), None, image, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    expected = decode(order, kind, raw[0])
    if suffix == "f":
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_array_equal(out.astype(np.int64), expected)


def encode(order: str, kind: str, rgba: np.ndarray) -> np.ndarray:
    """Section 8.3.1: (..., 4) values written to a format, as stored channels."""
    write_map = {"R": "0", "A": "3", "RG": "01", "RA": "03", "RGBA": "0123", "BGRA": "2103",
                 "ARGB": "3012", "INTENSITY": "0", "LUMINANCE": "0"}[order]
    channels = rgba[..., [int(c) for c in write_map]]
    dtype = np.dtype(STORAGE[kind])
    if kind in NORM_SCALE:  # convert_<type>_sat_rte(f * scale); NaN becomes 0
        info = np.iinfo(dtype)
        scaled = channels.astype(f32) * f32(NORM_SCALE[kind])
        scaled = np.where(np.isnan(scaled), f32(0.0), scaled)
        return np.clip(np.rint(scaled), info.min, info.max).astype(dtype)
    if is_integer(kind):  # convert_<type>_sat
        info = np.iinfo(dtype)
        return np.clip(channels.astype(np.int64), info.min, info.max).astype(dtype)
    return channels.astype(dtype)  # half: round to nearest even


@pytest.mark.parametrize(("order", "kind"), FORMATS, ids=[f"{o}-{k}" for o, k in FORMATS])
def test_write_converts_every_format(ctx, queue, format_program, order, kind) -> None:
    rng = np.random.default_rng(4)
    block = texel_block("image2d_t")
    suffix = _suffix(kind)
    if suffix == "f":
        values = rng.uniform(-1.6, 1.6, block[1:] + (4,)).astype(f32)
        if kind in NORM_SCALE:
            values[0, 0] = [np.nan, 0.5 / 255, 1.5 / 255, -0.5 / 127]  # NaN; ties round to even
        elif kind == "FLOAT":
            values[0, 0] = [np.nan, np.inf, -0.0, 1e-40]
    elif suffix == "i":
        values = rng.integers(-(1 << 31), (1 << 31) - 1, block[1:] + (4,), dtype=np.int32)
        values[0, 0] = [-129, 128, -32769, 32768]
    else:
        values = rng.integers(0, (1 << 32) - 1, block[1:] + (4,), dtype=np.uint32)
        values[0, 0] = [255, 256, 65535, 65536]
    fmt = cl.ImageFormat(getattr(cl.channel_order, order), getattr(cl.channel_type, kind))
    image = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, fmt, shape=(block[2], block[1]))
    in_buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=values)
    getattr(format_program, f"write_{suffix}")(queue, (block[2], block[1]), None, image, in_buf)
    stored = np.zeros(block[1:] + (CHANNELS[order],), STORAGE[kind])
    cl.enqueue_copy(queue, stored, image, origin=(0, 0), region=(block[2], block[1]))
    np.testing.assert_array_equal(stored, encode(order, kind, values))


# ---------------------------------------------------------------------- queries

QUERY_SOURCE = """
__kernel void queries(__read_only {T} img, __global int *out)
{{
    out[0] = get_image_width(img);
    out[1] = {HEIGHT};
    out[2] = {DEPTH};
    out[3] = {ARRAY};
    out[4] = get_image_channel_data_type(img);
    out[5] = get_image_channel_order(img);
    {DIM}
}}
"""


@pytest.mark.parametrize("image_type", list(GEOMETRY))
def test_image_queries(ctx, queue, image_type) -> None:
    _, _, axes, layered, _, _ = GEOMETRY[image_type]
    dim = ""
    if axes == 2:
        dim = "int2 d = get_image_dim(img); out[6] = d.x; out[7] = d.y;"
    elif axes == 3:
        dim = "int4 d = get_image_dim(img); out[6] = d.x; out[7] = d.y; out[8] = d.z;"
    source = QUERY_SOURCE.format(
        T=image_type, HEIGHT="get_image_height(img)" if axes >= 2 else "-1",
        DEPTH="get_image_depth(img)" if axes == 3 else "-1",
        ARRAY="(int)get_image_array_size(img)" if layered else "-1", DIM=dim)
    block = texel_block(image_type)
    raw = np.zeros(block + (2,), np.uint16)
    image = make_image(cl, ctx, image_type, "RG", "UNORM_INT16", raw)
    out = np.full(9, -1, np.int32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    cl.Program(ctx, source).build().queries(queue, (1,), None, image, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    width, height, depth, layers = SIZES
    expected = [width, height if axes >= 2 else -1, depth if axes == 3 else -1,
                (layers if layered else -1), cl.channel_type.UNORM_INT16, cl.channel_order.RG]
    expected += [width, height][:axes] + [depth][:axes - 2] if axes >= 2 else []
    assert out[:len(expected)].tolist() == expected
    assert image.shape == GEOMETRY[image_type][0](*SIZES)


# ---------------------------------------------------------------------- program-scope samplers


def test_program_scope_sampler_and_literal_sampler_bits(ctx, queue) -> None:
    source = """
    const sampler_t clamp_smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP
                                | CLK_FILTER_NEAREST;
    __constant sampler_t edge_smp = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE
                                    | CLK_FILTER_LINEAR;
    __kernel void k(read_only image1d_t img, __global float4 *out)
    {
        out[0] = read_imagef(img, clamp_smp, -1);
        out[1] = read_imagef(img, clamp_smp, 2.5f);
        out[2] = read_imagef(img, edge_smp, 0.0f);
        out[3] = read_imagef(img, CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE, 9.0f);
    }
    """
    raw = np.arange(5 * 4, dtype=f32).reshape(1, 1, 5, 4)
    image = make_image(cl, ctx, "image1d_t", "RGBA", "FLOAT", raw)
    out = np.zeros((4, 4), f32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, source).build().k(queue, (1,), None, image, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    texels = raw[0, 0]
    np.testing.assert_array_equal(out, [[0, 0, 0, 0], texels[2], texels[0], texels[4]])


def test_3d_image_writes(ctx, queue) -> None:
    """cl_khr_3d_image_writes: the device lists it and a kernel enabling it writes slices."""
    assert "cl_khr_3d_image_writes" in ctx.devices[0].extensions
    source = """
    #pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable
    __kernel void k(__write_only image3d_t img)
    {
        int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
        write_imageui(img, p, (uint4)(p.x + 10 * p.y + 100 * p.z, 0, 0, 0));
    }
    """
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.UNSIGNED_INT16)
    image = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, fmt, shape=(5, 4, 3))
    cl.Program(ctx, source).build().k(queue, (5, 4, 3), None, image)
    out = np.zeros((3, 4, 5), np.uint16)
    cl.enqueue_copy(queue, out, image, origin=(0, 0, 0), region=(5, 4, 3))
    z, y, x = np.indices((3, 4, 5))
    np.testing.assert_array_equal(out, x + 10 * y + 100 * z)


def test_images_and_samplers_through_helper_functions_and_barriers(ctx, queue) -> None:
    source = """
    float4 get(read_only image2d_t img, sampler_t s, int2 p) { return read_imagef(img, s, p); }
    void put(write_only image2d_t img, int2 p, float4 v) { write_imagef(img, p, v); }
    __kernel void k(read_only image2d_t a, write_only image2d_t b)
    {
        const sampler_t edge = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
        sampler_t border = CLK_ADDRESS_CLAMP;
        int2 p = (int2)(get_global_id(0), get_global_id(1));
        float4 v = get(a, edge, p - 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        v += get(a, border, p + 100);
        put(b, p, v);
    }
    """
    picture = np.random.default_rng(2).random((4, 8), dtype=f32)
    src = cl.image_from_array(ctx, picture, 1)
    dst = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, src.format, shape=(8, 4))
    cl.Program(ctx, source).build().k(queue, (8, 4), (4, 2), src, dst)
    out = np.zeros_like(picture)
    cl.enqueue_copy(queue, out, dst, origin=(0, 0), region=(8, 4))
    shifted = np.pad(picture, ((1, 0), (1, 0)), mode="edge")[:4, :8]  # texel p - 1, clamped
    np.testing.assert_array_equal(out, shifted)  # + the border's red, 0
