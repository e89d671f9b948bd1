#!/usr/bin/env python
"""A 3x3 box blur and a 2x bilinear downscale of a grayscale picture through OpenCL images:
``image2d_t`` arguments, a program-scope sampler and one passed from the host,
``cl.image_from_array`` and ``enqueue_copy`` back to numpy. Written against PyOpenCL: the
line importing ppcl is the only difference."""

import numpy as np

import ppcl as cl

KERNELS = """
const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE
                       | CLK_FILTER_NEAREST;

__kernel void blur(__read_only image2d_t src, __write_only image2d_t dst)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 sum = (float4)(0.0f);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += read_imagef(src, edge, p + (int2)(dx, dy));
    write_imagef(dst, p, sum / 9.0f);
}

__kernel void downscale(__read_only image2d_t src, sampler_t smooth,
                        __write_only image2d_t dst)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float2 size = (float2)((float)get_image_width(dst), (float)get_image_height(dst));
    float2 at = ((float2)((float)p.x, (float)p.y) + 0.5f) / size;
    write_imagef(dst, p, read_imagef(src, smooth, at));
}
"""

rng = np.random.default_rng(7)
height, width = 96, 128
picture = rng.random((height, width), dtype=np.float32)

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, KERNELS).build()

src = cl.image_from_array(ctx, picture, 1)
fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)

blurred_img = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, fmt, shape=(width, height))
prg.blur(queue, (width, height), None, src, blurred_img)
blurred = np.empty_like(picture)
cl.enqueue_copy(queue, blurred, blurred_img, origin=(0, 0), region=(width, height))

smooth = cl.Sampler(ctx, True, cl.addressing_mode.CLAMP_TO_EDGE, cl.filter_mode.LINEAR)
small_img = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, fmt, shape=(width // 2, height // 2))
prg.downscale(queue, (width // 2, height // 2), None, src, smooth, small_img)
small = np.empty((height // 2, width // 2), dtype=np.float32)
cl.enqueue_copy(queue, small, small_img, origin=(0, 0), region=(width // 2, height // 2))

# Check with numpy: the blur repeats edge pixels, the downscale averages 2x2 blocks (each
# output's sampling point lies half way between four input texels)
padded = np.pad(picture.astype(np.float64), 1, mode="edge")
blur_ref = sum(padded[1 + dy:1 + dy + height, 1 + dx:1 + dx + width]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9.0
small_ref = picture.astype(np.float64).reshape(height // 2, 2, width // 2, 2).mean(axis=(1, 3))
print("blur: largest difference from numpy", np.abs(blurred - blur_ref).max())
print("downscale: largest difference from numpy", np.abs(small - small_ref).max())
assert np.allclose(blurred, blur_ref, atol=1e-5)
assert np.allclose(small, small_ref, atol=1e-5)
