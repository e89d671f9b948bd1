"""Vector elements the overlay's generated kernels load only to take components, loaded a
component at a time (``ppcl/compiler/transforms/components.py``): results equal to the kernels run without
the overlay, and the vectors that must stay whole kept."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_sources import LUMINANCE

import ppcl as cl

mf = cl.mem_flags

SOURCE = LUMINANCE + """
__kernel void norm3(__global const float3 *p, __global float *out, float k)
{
    int i = get_global_id(0);
    float3 v = p[i];
    out[i] = k * (v.x * v.x + v.y * v.y + v.z * v.z);
}

__kernel void second(__global const short4 *s, __global float *out, float k)
{
    int i = get_global_id(0);
    out[i] = k * convert_float(s[i].y) + convert_float4(s[i]).w;
}

__kernel void whole(__global const uchar4 *px, __global float4 *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    out[i] = c * k + (float4)(c.x, 0.0f, 0.0f, 0.0f);
}

__kernel void in_place(__global uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    px[i] = (uchar4)(1, 2, 3, 4);
    out[i] = c.x * k;
}
"""

CASES = [  # kernel, input dtype and components, output components, split into components
    ("luminance", np.uint8, 4, 1, True),
    ("norm3", np.float32, 4, 1, True),  # a float3 element takes the room of a float4
    ("second", np.int16, 4, 1, True),
    ("whole", np.uint8, 4, 4, False),  # the vector is used whole
    ("in_place", np.uint8, 4, 1, False),  # the buffer is written by the kernel
]


@pytest.mark.parametrize("name, dtype, width, out_width, split", CASES)
def test_component_loads_equal_vector_loads(ctx, name, dtype, width, out_width, split):
    prg = cl.Program(ctx, SOURCE).build()
    rng = np.random.default_rng(13)
    n = 203
    plain = cl.CommandQueue(ctx)
    overlaid = cl.CommandQueue(ctx)
    cl.overlay.enable(overlaid)

    def run(queue, data):
        src = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
        out = cl.Buffer(ctx, mf.WRITE_ONLY, n * out_width * 4)
        getattr(prg, name)(queue, (n,), None, src, out, np.float32(0.75))
        result = np.empty(n * out_width, np.float32)
        cl.enqueue_copy(queue, result, out)
        return result

    for _ in range(3):  # the second and third replays run a generated (specialized) kernel
        if np.dtype(dtype).kind == "f":
            data = rng.standard_normal(n * width).astype(dtype)
        else:
            info = np.iinfo(dtype)
            data = rng.integers(info.min, info.max, n * width, dtype=dtype, endpoint=True)
        np.testing.assert_array_equal(run(overlaid, data), run(plain, data))
    notes = cl.overlay.graph().notes
    assert any(n.startswith("specialized") for n in notes)
    assert any(n.startswith("component loads") for n in notes) == split


ALIASED = """
__kernel void overwrite(__global const uchar4 *a, __global uchar4 *b, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(a[i]);
    b[i] = (uchar4)(9, 9, 9, 9);
    out[i] = c.x * k;
}
"""


def test_element_of_a_buffer_stored_through_another_parameter_stays_a_vector_load(ctx):
    prg = cl.Program(ctx, ALIASED).build()
    rng = np.random.default_rng(17)
    n = 77
    plain = cl.CommandQueue(ctx)
    overlaid = cl.CommandQueue(ctx)
    cl.overlay.enable(overlaid)

    def run(queue, data):
        both = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
        out = cl.Buffer(ctx, mf.WRITE_ONLY, n * 4)
        prg.overwrite(queue, (n,), None, both, both, out, np.float32(2.0))
        result = np.empty(n, np.float32)
        cl.enqueue_copy(queue, result, out)
        return result

    for _ in range(3):
        data = rng.integers(0, 256, n * 4, dtype=np.uint8)
        got, expected = run(overlaid, data), run(plain, data)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(expected, data[0::4].astype(np.float32) * 2.0)
    notes = cl.overlay.graph().notes
    assert any(n.startswith("specialized") for n in notes)
    assert not any(n.startswith("component loads") for n in notes)
