"""Images and samplers on the host side, as PyOpenCL spells it (OpenCL 1.2 section 5.3):
``Image``, ``image_from_array``, ``enqueue_copy`` between images, buffers and host memory
(pitches, USE_HOST_PTR, 1D array layers), fills, maps, the queries and formats; misuse of images
in kernels and in ``set_arg``; and the image-filter example, run as written (and under
pyopencl on pocl where it is installed, with the same results).
"""

from __future__ import annotations

import re
import runpy
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ppcl as cl

ROOT = Path(__file__).resolve().parents[2]
f32 = np.float32


# ---------------------------------------------------------------------- the host API


def test_enqueue_copy_between_host_images_and_buffers(ctx, queue) -> None:
    rng = np.random.default_rng(8)
    picture = rng.integers(0, 255, (6, 9, 4), dtype=np.uint8)
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8)
    image = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(9, 6))
    cl.enqueue_copy(queue, image, picture, origin=(0, 0), region=(9, 6))
    # a sub-rectangle out, into a host array with padded rows
    part = np.zeros((3, 8, 4), np.uint8)
    cl.enqueue_copy(queue, part, image, origin=(2, 1), region=(5, 3), pitches=(8 * 4,))
    np.testing.assert_array_equal(part[:, :5], picture[1:4, 2:7])
    # image -> buffer -> another image at an offset
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 9 * 6 + 16)
    cl.enqueue_copy(queue, buf, image, origin=(0, 0), region=(9, 6), offset=16)
    other = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(12, 8))
    cl.enqueue_fill_image(queue, other, np.array([1, 2, 3, 4], np.uint32), origin=(0, 0),
                          region=(12, 8))
    cl.enqueue_copy(queue, other, buf, offset=16, origin=(3, 2), region=(9, 6))
    back = np.zeros((8, 12, 4), np.uint8)
    cl.enqueue_copy(queue, back, other, origin=(0, 0), region=(12, 8))
    np.testing.assert_array_equal(back[2:8, 3:12], picture)
    np.testing.assert_array_equal(back[:2], np.broadcast_to([1, 2, 3, 4], (2, 12, 4)))
    # image -> image
    third = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(4, 4))
    cl.enqueue_copy(queue, third, image, src_origin=(5, 2), dest_origin=(0, 0), region=(4, 4))
    small = np.zeros((4, 4, 4), np.uint8)
    cl.enqueue_copy(queue, small, third, origin=(0, 0), region=(4, 4))
    np.testing.assert_array_equal(small, picture[2:6, 5:9])
    with pytest.raises(cl.Error, match="INVALID_VALUE"):
        cl.enqueue_copy(queue, small, third, origin=(1, 1), region=(4, 4))


def test_enqueue_copy_without_origin_or_region_copies_to_the_end(ctx, queue) -> None:
    """An image's origin defaults to 0 and its region to the rest of the image from the
    origin: a copy without them ended in KeyError: 'origin' (host copies) or a TypeError
    about missing positional arguments (buffer to image)."""
    picture = np.arange(12, dtype=f32).reshape(3, 4)
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    image = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(4, 3))
    cl.enqueue_copy(queue, image, picture)
    corner = np.zeros((2, 3), f32)
    cl.enqueue_copy(queue, corner, image, origin=(1, 1))
    np.testing.assert_array_equal(corner, picture[1:, 1:])
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, picture.nbytes)
    cl.enqueue_copy(queue, buf, image)
    other = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(4, 3))
    cl.enqueue_copy(queue, other, buf)
    big = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(6, 5))
    cl.enqueue_fill_image(queue, big, np.zeros(4, f32), origin=(0, 0), region=(6, 5))
    cl.enqueue_copy(queue, big, other, dest_origin=(2, 2))
    back = np.zeros((5, 6), f32)
    cl.enqueue_copy(queue, back, big)
    np.testing.assert_array_equal(back[2:, 2:], picture)
    with pytest.raises(cl.Error, match="INVALID_VALUE.*destination"):
        cl.enqueue_copy(queue, image, big)  # the whole of big does not fit image


def test_a_strided_host_array_is_refused_by_the_call_that_got_it(ctx, queue) -> None:
    """The error names the OpenCL call (it named an internal helper: 'host_bytes failed')."""
    picture = np.zeros((6, 8), f32)
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    with pytest.raises(cl.Error, match="clCreateImage failed: CL_INVALID_HOST_PTR.*contiguous"):
        cl.Image(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, fmt, shape=(4, 6),
                 hostbuf=picture[:, ::2])
    image = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(4, 6))
    with pytest.raises(cl.Error, match="clEnqueueReadImage failed: CL_INVALID_HOST_PTR"):
        cl.enqueue_copy(queue, picture[:, ::2], image, origin=(0, 0), region=(4, 6))
    with pytest.raises(cl.Error, match="clEnqueueReadBuffer failed: CL_INVALID_HOST_PTR"):
        cl.enqueue_copy(queue, picture[:, ::2], cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 96))


def test_image_shape_entries_are_integers(ctx) -> None:
    """A float width was truncated without a word (4.5 made a 4-texel image) and an int
    shape ended in "'int' object is not iterable"; one integer is a 1D image's width."""
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    flags = cl.mem_flags.READ_WRITE
    with pytest.raises(cl.Error, match="clCreateImage failed: CL_INVALID_VALUE.*4.5"):
        cl.Image(ctx, flags, fmt, shape=(4.5, 2))
    assert cl.Image(ctx, flags, fmt, shape=4).shape == (4,)
    assert cl.Image(ctx, flags, fmt, shape=np.array([4, 3])).shape == (4, 3)


def test_host_pitches_use_host_ptr_and_1d_array_layers(ctx, queue) -> None:
    """Host memory with padded rows (USE_HOST_PTR: the kernel reads it in place), and a 1D
    image array whose layers are ``slice_pitch`` apart on the host."""
    source = """
    __kernel void copy2d(__read_only image2d_t src, __global float *out)
    {
        int x = get_global_id(0), y = get_global_id(1);
        out[y * get_image_width(src) + x] = read_imagef(src, (int2)(x, y)).x;
    }
    __kernel void layers(__read_only image1d_array_t src, __global float *out)
    {
        int x = get_global_id(0), l = get_global_id(1);
        out[l * get_image_width(src) + x] = read_imagef(src, (int2)(x, l)).x;
    }
    """
    prg = cl.Program(ctx, source).build()
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    mf = cl.mem_flags
    padded = np.arange(4 * 8, dtype=f32).reshape(4, 8)  # 5 texels used of each 8-float row
    image = cl.Image(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, fmt, shape=(5, 4), pitches=(32,),
                     hostbuf=padded)
    out = np.zeros((4, 5), f32)
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.copy2d(queue, (5, 4), None, image, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    np.testing.assert_array_equal(out, padded[:, :5])
    spaced = np.arange(3 * 10, dtype=f32).reshape(3, 10)  # 3 layers of 6 texels, 40 bytes apart
    array = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape=(6, 3), pitches=(24, 40),
                     hostbuf=spaced, is_array=True)
    assert array.get_image_info(cl.image_info.ROW_PITCH) == 24
    out = np.zeros((3, 6), f32)
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.layers(queue, (6, 3), None, array, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    np.testing.assert_array_equal(out, spaced[:, :6])
    back = np.zeros((3, 10), f32)
    cl.enqueue_copy(queue, back, array, origin=(0, 0), region=(6, 3), pitches=(24, 40))
    np.testing.assert_array_equal(back[:, :6], spaced[:, :6])


def test_fill_converts_the_color_and_map_sees_the_texels(ctx, queue) -> None:
    fmt = cl.ImageFormat(cl.channel_order.BGRA, cl.channel_type.UNORM_INT8)
    image = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(5, 3))
    cl.enqueue_fill_image(queue, image, np.array([1.0, 0.5, 0.0, 2.0], f32), origin=(0, 0),
                          region=(5, 3))
    mapped, _event, row_pitch, _slice = cl.enqueue_map_image(
        queue, image, cl.map_flags.READ | cl.map_flags.WRITE, (0, 0), (5, 3), (3, 5, 4),
        np.uint8)
    assert row_pitch == 5 * 4
    np.testing.assert_array_equal(mapped, np.broadcast_to([0, 128, 255, 255], (3, 5, 4)))
    mapped[1, 2] = [10, 20, 30, 40]
    mapped.base.release(queue)
    out = np.zeros((3, 5, 4), np.uint8)
    cl.enqueue_copy(queue, out, image, origin=(0, 0), region=(5, 3))
    assert out[1, 2].tolist() == [10, 20, 30, 40] and out[0, 0].tolist() == [0, 128, 255, 255]


def test_image_info_and_formats(ctx) -> None:
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.HALF_FLOAT)
    image = cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=(7, 3, 2), is_array=True)
    info = cl.image_info
    assert image.get_image_info(info.FORMAT) == fmt
    assert image.get_image_info(info.ELEMENT_SIZE) == 8
    assert image.get_image_info(info.WIDTH) == 7 and image.get_image_info(info.HEIGHT) == 3
    assert image.get_image_info(info.DEPTH) == 0 and image.get_image_info(info.ARRAY_SIZE) == 2
    assert image.get_image_info(info.ROW_PITCH) == 56
    assert image.get_image_info(info.SLICE_PITCH) == 168
    assert image.type == cl.mem_object_type.IMAGE2D_ARRAY and image.shape == (7, 3, 2)
    device = ctx.devices[0]
    assert device.image_support and device.image2d_max_width >= 8192
    assert device.max_read_image_args >= 128 and device.max_samplers >= 16
    for image_type in (cl.mem_object_type.IMAGE1D, cl.mem_object_type.IMAGE2D,
                       cl.mem_object_type.IMAGE3D, cl.mem_object_type.IMAGE2D_ARRAY):
        formats = cl.get_supported_image_formats(ctx, cl.mem_flags.READ_WRITE, image_type)
        # the formats every OpenCL 1.2 device must support (section 5.3.2.1)
        for order, kind in (("RGBA", "UNORM_INT8"), ("RGBA", "FLOAT"), ("BGRA", "UNORM_INT8"),
                            ("RGBA", "SIGNED_INT32"), ("RGBA", "HALF_FLOAT")):
            assert cl.ImageFormat(getattr(cl.channel_order, order),
                                  getattr(cl.channel_type, kind)) in formats
    sampler = cl.Sampler(ctx, True, cl.addressing_mode.REPEAT, cl.filter_mode.LINEAR)
    assert sampler.get_info(cl.sampler_info.ADDRESSING_MODE) == cl.addressing_mode.REPEAT
    assert sampler.get_info(cl.sampler_info.NORMALIZED_COORDS) is True


def test_image_from_array_round_trip_and_modes(ctx, queue) -> None:
    picture = np.arange(4 * 6 * 2, dtype=np.uint16).reshape(4, 6, 2)
    image = cl.image_from_array(ctx, picture, 2, norm_int=True)
    assert image.format == cl.ImageFormat(cl.channel_order.RG, cl.channel_type.UNORM_INT16)
    assert image.shape == (6, 4)
    back = np.zeros_like(picture)
    cl.enqueue_copy(queue, back, image, origin=(0, 0), region=(6, 4))
    np.testing.assert_array_equal(back, picture)
    out = cl.image_from_array(ctx, np.zeros((3, 5), np.float32), 1, mode="w")
    assert out.flags & cl.mem_flags.WRITE_ONLY and out.shape == (5, 3)
    with pytest.raises(cl.Error, match="INVALID_VALUE"):
        cl.image_from_array(ctx, picture, 2, mode="rw")


def test_create_image_writes_a_gray_picture(ctx, queue) -> None:
    # an RGBA destination made with create_image, the spelling of newer PyOpenCL programs
    picture = np.random.default_rng(2).integers(0, 255, (5, 7, 4), dtype=np.uint8)
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8)
    dest = cl.create_image(ctx, cl.mem_flags.WRITE_ONLY, fmt, (7, 5))
    assert isinstance(dest, cl.Image) and dest.shape == (7, 5)
    prg = cl.Program(ctx, """
        kernel void gray(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
            int2 p = (int2)(get_global_id(0), get_global_id(1));
            uint4 c = read_imageui(src, s, p);
            uint g = (c.x + c.y + c.z) / 3;
            write_imageui(dst, p, (uint4)(g, g, g, 255));
        }""").build()
    sampler = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP_TO_EDGE, cl.filter_mode.NEAREST)
    prg.gray(queue, (7, 5), None, cl.image_from_array(ctx, picture, 4), dest, sampler)
    out = np.empty_like(picture)
    cl.enqueue_copy(queue, out, dest, origin=(0, 0), region=(7, 5))
    np.testing.assert_array_equal(out[..., 0], picture[..., :3].astype(np.uint32).sum(-1) // 3)
    assert (out[..., 3] == 255).all()
    copied = cl.create_image(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, fmt,
                             (7, 5), hostbuf=picture)
    cl.enqueue_copy(queue, out, copied, origin=(0, 0), region=(7, 5))
    np.testing.assert_array_equal(out, picture)


def test_image1d_buffer_reads_and_writes_the_buffer(ctx, queue) -> None:
    source = """
    __kernel void twice(__read_only image1d_buffer_t src, __write_only image1d_buffer_t dst)
    {
        int i = get_global_id(0);
        write_imagef(dst, i, 2.0f * read_imagef(src, i));
    }
    """
    values = np.arange(16 * 4, dtype=f32)
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    mf = cl.mem_flags
    src_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=values)
    dst_buf = cl.Buffer(ctx, mf.READ_WRITE, values.nbytes)
    src = cl.Image(ctx, mf.READ_ONLY, fmt, shape=(16,), buffer=src_buf)
    dst = cl.Image(ctx, mf.WRITE_ONLY, fmt, shape=(16,), buffer=dst_buf)
    cl.Program(ctx, source).build().twice(queue, (16,), None, src, dst)
    out = np.zeros_like(values)
    cl.enqueue_copy(queue, out, dst_buf)
    np.testing.assert_array_equal(out, 2 * values)


# ---------------------------------------------------------------------- misuse


@pytest.mark.parametrize(("body", "message"), [
    ("__kernel void k(__read_only image2d_t img) { write_imagef(img, (int2)(0), (float4)(0)); }",
     "no matching overload for builtin 'write_imagef'"),
    ("__kernel void k(__write_only image2d_t img, sampler_t s, __global float4 *o)"
     " { o[0] = read_imagef(img, s, (float2)(0)); }",
     "no matching overload for builtin 'read_imagef'"),
    ("__kernel void k(__read_write image2d_t img) { }", "read_write images are OpenCL C 2.0"),
    ("__kernel void k(__read_only __global float *p) { }",
     "access qualifier 'read_only' applies only to image types"),
    ("__kernel void k(image2d_t img) { image2d_t copy = img; }",
     "images can only be function parameters"),
    ("__kernel void k(__global image2d_t *imgs) { }", "pointer to 'image2d_t'"),
    # section 6.9: a sampler is not modified, pointed to, put in an array or a struct
    ("__kernel void k(sampler_t s) { s = 0; }", "a sampler cannot be modified"),
    ("__kernel void k(sampler_t s) { s |= CLK_FILTER_LINEAR; }", "a sampler cannot be modified"),
    ("__kernel void k(__global sampler_t *s) { }", "pointer to 'sampler_t'"),
    ("__kernel void k(__global int *o) { sampler_t s[2]; }", "an array of samplers"),
    ("struct S { sampler_t s; }; __kernel void k(__global int *o) { }",
     "member 's' has type 'sampler_t'"),
])
def test_misuse_is_a_located_compile_error(ctx, body, message) -> None:
    with pytest.raises(cl.Error) as info:
        cl.Program(ctx, body).build()
    text = str(info.value)
    assert message in text
    assert re.search(r":1:\d+: error", text), text  # located: file:line:col


def test_set_arg_checks_images_and_samplers(ctx) -> None:
    source = "__kernel void k(__read_only image2d_t img, sampler_t s) { }"
    kernel = cl.Program(ctx, source).build().k
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, 64)
    with pytest.raises(cl.Error, match="INVALID_MEM_OBJECT"):
        kernel.set_arg(0, buf)
    with pytest.raises(cl.Error, match="INVALID_ARG_VALUE"):
        kernel.set_arg(0, cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=(4, 4, 4)))
    with pytest.raises(cl.Error, match="INVALID_SAMPLER"):
        kernel.set_arg(1, np.uint32(0))
    kernel.set_arg(0, cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=(4, 4)))
    with pytest.raises(cl.Error, match="IMAGE_FORMAT_NOT_SUPPORTED"):
        cl.Image(ctx, cl.mem_flags.READ_ONLY,
                 cl.ImageFormat(cl.channel_order.RGB, cl.channel_type.UNORM_SHORT_565),
                 shape=(4, 4))
    access = kernel.get_arg_info(0, cl.kernel_arg_info.ACCESS_QUALIFIER)
    assert access == cl.kernel_arg_access_qualifier.READ_ONLY


def test_an_image_is_no_buffer_and_a_buffer_no_image(ctx, queue) -> None:
    """An image where a pointer, a buffer fill or a buffer map is expected (and a buffer in an
    image command) is CL_INVALID_MEM_OBJECT: the kernel would otherwise get the texels' bytes
    as a plain array, and a fill would write bytes without the image's format."""
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    image = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(4, 4))
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    kernel = cl.Program(ctx, "__kernel void k(__global float4 *o) { o[0] = 1; }").build().k
    with pytest.raises(cl.Error, match="INVALID_MEM_OBJECT.*pass a Buffer"):
        kernel(queue, (1,), None, image)
    with pytest.raises(cl.Error, match="clEnqueueFillBuffer.*INVALID_MEM_OBJECT"):
        cl.enqueue_fill_buffer(queue, image, np.float32(1), 0, 16)
    with pytest.raises(cl.Error, match="clEnqueueMapBuffer.*INVALID_MEM_OBJECT"):
        cl.enqueue_map_buffer(queue, image, cl.map_flags.READ, 0, (4,), np.float32)
    with pytest.raises(cl.Error, match="clEnqueueFillImage.*INVALID_MEM_OBJECT"):
        cl.enqueue_fill_image(queue, buf, np.zeros(4, f32), origin=(0, 0), region=(1, 1))
    with pytest.raises(cl.Error, match="clEnqueueMapImage.*INVALID_MEM_OBJECT"):
        cl.enqueue_map_image(queue, buf, cl.map_flags.READ, (0, 0), (1, 1), (4,), f32)


def test_arguments_the_specification_forbids_are_invalid_value(ctx) -> None:
    """REPEAT and MIRRORED_REPEAT only address normalized coordinates (section 6.12.14.1; pocl
    refuses them too), and an image on a buffer has the buffer's bytes, so a 'hostbuf' for it
    (section 5.3.1 forbids one) would be dropped without a word."""
    for mode in (cl.addressing_mode.REPEAT, cl.addressing_mode.MIRRORED_REPEAT):
        with pytest.raises(cl.Error, match="INVALID_VALUE.*needs normalized coordinates"):
            cl.Sampler(ctx, False, mode, cl.filter_mode.NEAREST)
        cl.Sampler(ctx, True, mode, cl.filter_mode.NEAREST)
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    mf = cl.mem_flags
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    with pytest.raises(cl.Error, match="INVALID_VALUE.*no 'hostbuf'"):
        cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape=(16,), buffer=buf,
                 hostbuf=np.ones(16, f32))
    with pytest.raises(cl.Error, match="INVALID_IMAGE_DESCRIPTOR"):
        cl.Image(ctx, mf.READ_ONLY, fmt, shape=(16,),
                 buffer=cl.Image(ctx, mf.READ_WRITE, fmt, shape=(16,)))
    assert cl.Image(ctx, mf.READ_ONLY, fmt, shape=(16,), buffer=buf).width == 16


# ---------------------------------------------------------------------- the example program


def test_image_filter_example_runs_as_written(pocl) -> None:
    """The PyOpenCL-style example runs with ``import ppcl as cl``, and, where pocl is
    installed, unchanged but for that line under pyopencl, with the same results."""
    path = ROOT / "examples" / "image_filter.py"
    ours = runpy.run_path(str(path))
    assert np.allclose(ours["blurred"], ours["blur_ref"], atol=1e-5)
    assert np.allclose(ours["small"], ours["small_ref"], atol=1e-5)
    if pocl is None:
        return
    text = path.read_text(encoding="utf-8")
    assert text.count("import ppcl as cl") == 1
    code = compile(text.replace("import ppcl as cl", "import pyopencl as cl"), str(path), "exec")
    theirs: dict[str, Any] = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(code, theirs)
    np.testing.assert_allclose(ours["blurred"], theirs["blurred"], atol=1e-6)
    np.testing.assert_allclose(ours["small"], theirs["small"], atol=1e-6)
