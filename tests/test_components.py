"""Component loads and scalarized narrow vectors in the CPU pipeline
(``transforms/components.py``, ``transforms/scalarize.py``): every kernel gives, bit for bit,
what the same kernel built without the two gives, on random inputs and awkward sizes; the
plans name each candidate vector and why it was or was not loaded a component at a time."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from kernel_sources import LUMINANCE, SOBEL

import ppcl
import ppcl as cl
import ppcl.runtime.platform
from ppcl.compiler.frontend import compile_source, parse_build_options
from ppcl.compiler.pipeline import KernelSpec, Pipeline, kernel_ir
from ppcl.devices.cpu import CPUProgram
from ppcl.devices.serial import SerialDevice
from ppcl.settings import Debug
from tests.launch import build_kernel

mf = cl.mem_flags

PLAIN = Pipeline.parse("inline,switch,normalize,workgroup,schedule,split")


class _PlainDevice(SerialDevice):
    """The serial device building without the component and scalarizing passes."""

    def build(self, module: Any, options: Any, debug: Any) -> CPUProgram:
        return CPUProgram(module, options, debug, self.pool, pipeline=PLAIN)


@pytest.fixture(scope="module")
def contexts() -> tuple[cl.Context, cl.Context]:
    platform = ppcl.get_platforms()[0]
    return (cl.Context([ppcl.runtime.platform.Device(platform, SerialDevice())]),
            cl.Context([ppcl.runtime.platform.Device(platform, _PlainDevice())]))


SOURCE = LUMINANCE + """
__kernel void whole(__global const uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    float4 d = c * k;
    out[i] = d.x + d.w;
}

__kernel void geometric(__global const uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    out[i] = dot(c, c) * k + length(c);
}

__kernel void difference(__global const uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 d = convert_float4(px[i]) - convert_float4(px[i + 1]);
    float4 e = convert_float4(px[i]) * k - convert_float4(px[i + 1]);
    out[i] = dot(d, d) + e.y;
}

__kernel void written(__global uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    px[i] = (uchar4)(1, 2, 3, 4);
    out[i] = c.x * k + c.z;
}

__kernel void moved(__global const short4 *s, __global float *out, float k)
{
    int i = get_global_id(0);
    short4 v = s[i];
    i = i ^ 1;
    out[i] = k * v.y + v.w;
}

__kernel void aliased(__global const uchar4 *a, __global uchar4 *b, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(a[i]);
    b[i] = (uchar4)(9, 9, 9, 9);
    out[i] = c.x * k + c.y;
}

__kernel void stored_after(__global const uchar4 *a, __global uchar4 *b, __global float *out,
                           float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(a[i]);
    out[i] = c.x * k + c.y;
    b[i] = (uchar4)(9, 9, 9, 9);
}
""" + SOBEL.replace("TYPE", "uint")

# kernel, vectors loaded a component at a time (plans), kept vectors and why
DECISIONS = [
    ("luminance", ["c"], []),
    ("whole", [], [("c", "used whole")]),
    ("geometric", ["c"], []),
    ("difference", ["d", "e"], []),
    ("written", [], [("c", "its buffer px is written by the kernel")]),
    ("moved", [], [("v", "its index reads i, which the kernel changes")]),
    ("aliased", [], [("c", "a store, call or barrier may come between its load and a use")]),
    ("stored_after", ["c"], []),
]


@pytest.mark.parametrize("name, taken, kept", DECISIONS)
def test_plans_name_each_candidate_and_why(name: str, taken: list[str],
                                           kept: list[tuple[str, str]]) -> None:
    module = compile_source(SOURCE).module
    stream = io.StringIO()
    kernel_ir(module, name, KernelSpec((8, 1, 1)), parse_build_options(""),
              Debug(frozenset({"plans"})), stream=stream)
    lines = stream.getvalue().splitlines()
    for var in taken:
        assert any(f"{name}: component loads: {var} (" in line for line in lines), lines
    for var, why in kept:
        assert any(f"{name}: no component loads for {var}: {why}" in line
                   for line in lines), lines
    if not taken:
        assert not any("component loads: " in line for line in lines)


def _run(ctx: cl.Context, name: str, gsize: tuple[int, ...], arrays: list[np.ndarray],
         scalars: tuple[Any, ...], same: bool = False) -> list[np.ndarray]:
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    buffers = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    args = [buffers[0], *buffers] if same else buffers
    getattr(prg, name)(queue, gsize, None, *args, *scalars)
    results = [np.empty_like(a) for a in arrays]
    for result, buffer in zip(results, buffers):
        cl.enqueue_copy(queue, result, buffer)
    return results


def _pixels(rng: np.random.Generator, n: int, dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n * 4, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("name", ["luminance", "whole", "geometric", "difference", "written",
                                  "moved", "aliased", "stored_after"])
@pytest.mark.parametrize("n", [1, 203, 1030])
def test_results_equal_the_kernel_built_without_them(contexts, name: str, n: int) -> None:
    rng = np.random.default_rng(n)
    dtype = np.int16 if name == "moved" else np.uint8
    arrays = [_pixels(rng, n + 1, dtype)]
    if name in ("aliased", "stored_after"):
        arrays.append(arrays[0].copy())
    arrays.append(rng.standard_normal(n + 1).astype(np.float32))
    gsize = (n + 1,) if name == "moved" and n % 2 else (n,)
    got, want = (_run(c, name, gsize, arrays, (np.float32(0.75),)) for c in contexts)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n", [1, 64, 203])
def test_one_buffer_passed_for_both_the_read_and_the_written_parameter(contexts, n: int
                                                                       ) -> None:
    rng = np.random.default_rng(n)
    pixels = rng.integers(0, 256, n * 4, dtype=np.uint8)
    for name in ("aliased", "stored_after"):
        arrays = [pixels, np.zeros(n, np.float32)]
        got, want = (_run(c, name, (n,), arrays, (np.float32(2.0),), same=True)
                     for c in contexts)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
    got, _ = (_run(c, "aliased", (n,), [pixels, np.zeros(n, np.float32)],
                   (np.float32(2.0),), same=True) for c in contexts)
    old = pixels.astype(np.float32)  # each work-item reads its pixel before storing it
    np.testing.assert_array_equal(got[1], old[0::4] * np.float32(2.0) + old[1::4])


@pytest.mark.parametrize("shape", [(17, 23), (64, 64), (100, 37), (3, 3)])
def test_sobel_on_uchar4_pixels_equals_the_kernel_built_without_them(contexts, shape) -> None:
    h, w = shape
    rng = np.random.default_rng(h * w)
    pixels = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    out = np.zeros_like(pixels)
    got, want = (_run(c, "sobel", (w, h), [pixels, out], ()) for c in contexts)
    np.testing.assert_array_equal(got[1], want[1])


def test_sobel_loads_pixel_components_as_scalars() -> None:
    c_source = build_kernel(SOURCE, "sobel", local_size=(16, 16)).c_source
    group = c_source[c_source.index("static void ppcl_group_sobel"):]
    assert "__ppcl_convert_float4__uchar4(" not in group
    assert "__ppcl_convert_float__uchar(((unsigned char *)(" in group
    assert "__ppcl_hypot__float_float(" in group


GEOMETRIC_VECTORS = """
__kernel void measure(__global const float4 *p, __global const float3 *q, __global float *out)
{
    int i = get_global_id(0);
    float4 a = p[i];
    out[i] = dot(a, p[i + 1]) + length(a) + dot(q[i], q[i]);
}
"""


@pytest.mark.cpu_device  # bit for bit as the CPU's C lowering computes (nvcc fuses the sums)
def test_dot_and_length_of_loaded_vectors_vectorize() -> None:
    """``dot`` and ``length`` of a loaded ``float4`` kept the whole vector load, which left
    the work-item loop scalar; written out by components, the loop vectorizes, and the values
    are those of the C lowering (the sum in order in float, length's in double)."""
    kernel = build_kernel(GEOMETRIC_VECTORS, "measure", local_size=(16,),
                          want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report
    module = compile_source(GEOMETRIC_VECTORS).module
    stream = io.StringIO()
    kernel_ir(module, "measure", KernelSpec((16, 1, 1)), parse_build_options(""),
              Debug(frozenset({"plans"})), stream=stream)
    assert "measure: component loads: 3 dot or length call(s) written out by components" \
        in stream.getvalue(), stream.getvalue()
    rng = np.random.default_rng(5)
    n = 37
    p = rng.standard_normal((n + 1, 4)).astype(np.float32)
    q = rng.standard_normal((n, 4)).astype(np.float32)  # float3 elements take 16 bytes
    out = np.zeros(n, np.float32)
    ctx = cl.Context([ppcl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, GEOMETRIC_VECTORS).build()
    bp, bq = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in (p, q))
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.measure(queue, (n,), None, bp, bq, bo)
    cl.enqueue_copy(queue, out, bo)
    a, b = p[:n], p[1:]
    dot4 = ((a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]) + a[:, 2] * b[:, 2]) + a[:, 3] * b[:, 3]
    d = a.astype(np.float64)
    length = np.sqrt(((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2])
                     + d[:, 3] * d[:, 3]).astype(np.float32)
    dot3 = (q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1]) + q[:, 2] * q[:, 2]
    np.testing.assert_array_equal(out, (dot4 + length) + dot3)
