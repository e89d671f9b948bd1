"""The kernel generators over ppcl.array (ElementwiseKernel, ReductionKernel, scans), clmath,
clrandom and the dtype helpers of ppcl.tools, against numpy; the PyOpenCL array example run
with ppcl and, where pyopencl and pocl are installed, with pyopencl."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ppcl
import ppcl.array as cla
import ppcl.clmath as clmath
import ppcl.clrandom as clrandom
from ppcl import tools
from ppcl.elementwise import ElementwiseKernel
from ppcl.reduction import ReductionKernel
from ppcl.scan import (
    ExclusiveScanKernel,
    GenericDebugScanKernel,
    GenericScanKernel,
    InclusiveScanKernel,
)
from tests.child_env import child_env

ROOT = Path(__file__).resolve().parent.parent


def test_elementwise_kernel(ctx, queue):
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(0, 1, 1000).astype(np.float32)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    z = cla.empty_like(a)
    knl = ElementwiseKernel(ctx, "float a, float *x, float *y, float *z",
                            "z[i] = a*x[i] + y[i]", "axpy")
    knl(2.5, a, b, z)
    np.testing.assert_allclose(z.get(), 2.5 * x + y)
    z.fill(0)
    knl(np.float32(1), a, b, z, slice=slice(10, 500, 7))
    want = np.zeros_like(x)
    want[10:500:7] = (x + y)[10:500:7]
    np.testing.assert_allclose(z.get(), want)
    knl(np.float32(1), a[100:], b[100:], z[:900])  # views with an offset
    np.testing.assert_allclose(z.get()[:900], (x + y)[100:])
    reverse = ElementwiseKernel(ctx, "float *x, float *z",
                                "if (i % 3 == 0) PYOPENCL_ELWISE_CONTINUE; z[i] = x[n - 1 - i]")
    z.fill(-1)
    reverse(a, z)
    want = np.where(np.arange(1000) % 3 == 0, -1, x[::-1])
    np.testing.assert_allclose(z.get(), want)
    z.fill(0)
    knl(np.float32(1), a, b, z, range=slice(999, 10, -2))
    want = np.zeros_like(x)
    want[999:10:-2] = (x + y)[999:10:-2]
    np.testing.assert_allclose(z.get(), want)


def test_elementwise_kernel_complex_and_errors(ctx, queue):
    c = (np.arange(10) + 1j * np.arange(10)[::-1]).astype(np.complex64)
    a = cla.to_device(queue, c)
    out = cla.empty_like(a)
    ElementwiseKernel(ctx, "cfloat_t *a, cfloat_t *out",
                      "out[i] = cfloat_mul(a[i], cfloat_conj(a[i]))")(a, out)
    np.testing.assert_allclose(out.get(), c * c.conj())
    knl = ElementwiseKernel(ctx, "float *x", "x[i] = 1")
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        knl(cla.zeros(queue, (4, 4), np.float32).T[::2])
    with pytest.raises(ppcl.LogicError, match="INVALID_ARG_VALUE"):
        knl(cla.zeros(queue, 4, np.int32))


def test_kernel_arguments_take_integers_of_the_declared_size_either_signedness(ctx, queue):
    """Flags kept in a uint8 (or bool) array are read as ``char``, as C reads them: the scan's
    ``char *segflags`` refused them; an integer of another size or a float is still refused."""
    flags = np.zeros(50, np.uint8)
    flags[[0, 20, 35]] = 1
    x = cla.to_device(queue, np.ones(50, np.int32))
    out = cla.empty_like(x)
    scan = GenericScanKernel(
        ctx, np.int32, "__global int *x, __global char *segflags, __global int *out",
        input_expr="x[i]", scan_expr="across_seg_boundary ? b : a + b", neutral="0",
        is_segment_start_expr="segflags[i]", output_statement="out[i] = item")
    want = np.concatenate([np.arange(1, 21), np.arange(1, 16), np.arange(1, 16)])
    for dtype in (np.uint8, np.int8, np.bool_):
        out.fill(0)
        scan(x, cla.to_device(queue, flags.astype(dtype)), out)
        np.testing.assert_array_equal(out.get(), want)
    count = ElementwiseKernel(ctx, "unsigned int *c", "c[i] += 1")
    signed = cla.to_device(queue, np.array([-2, 5], np.int32))
    count(signed)
    np.testing.assert_array_equal(signed.get(), [-1, 6])
    for wrong in (np.int16, np.float32):
        with pytest.raises(ppcl.LogicError, match="INVALID_ARG_VALUE"):
            count(cla.zeros(queue, 2, wrong))


def test_elementwise_kernel_reads_complex_arrays_as_float2(ctx, queue):
    # PyOpenCL's complex example declares complex64 arrays as float2 (double2 for complex128)
    for dtype, real_type in [(np.complex64, "float"), (np.complex128, "double")]:
        c = (np.arange(6) - 2j * np.arange(6)).astype(dtype)
        a = cla.to_device(queue, c)
        out = cla.empty_like(a)
        real = cla.empty(queue, len(a), dtype=c.real.dtype)
        ElementwiseKernel(ctx, f"{real_type}2 *x, {real_type}2 *z, {real_type} *r",
                          "z[i] = 3 * (x[i] + x[i]).yx; r[i] = x[i].x")(a, out, real)
        np.testing.assert_allclose(out.get(), 6 * (c.imag + 1j * c.real))
        np.testing.assert_allclose(real.get(), c.real)
    knl = ElementwiseKernel(ctx, "double2 *x", "x[i] = 0")
    with pytest.raises(ppcl.LogicError, match="INVALID_ARG_VALUE.*complex64"):
        knl(cla.zeros(queue, 4, np.complex64))


def test_reduction_kernel_without_arrays_returns_a_new_array(ctx, queue):
    """A reduction of the index alone takes no array, so the result's type cannot come from
    one: it is a 0-d ppcl.array.Array on the queue given, as in PyOpenCL."""
    triangle = ReductionKernel(ctx, np.int32, neutral="0", reduce_expr="a+b", map_expr="i",
                               arguments=[])
    result = triangle(range=slice(2000), queue=queue)
    assert isinstance(result, cla.Array) and result.shape == () and result.queue is queue
    assert result.get() == 2000 * 1999 // 2
    with pytest.raises(ppcl.LogicError, match="INVALID_COMMAND_QUEUE"):
        triangle(range=slice(10))


def test_reduction_kernel(ctx, queue):
    x = np.random.default_rng(0).random(100003).astype(np.float32)
    a = cla.to_device(queue, x)
    norm = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                           map_expr="x[i]*x[i]", arguments="__global float *x")
    np.testing.assert_allclose(norm(a).get(), (x * x).sum(), rtol=1e-5)
    np.testing.assert_allclose(norm(a, range=slice(5, 9000, 3)).get(),
                               (x[5:9000:3] ** 2).sum(), rtol=1e-5)
    biggest = ReductionKernel(ctx, np.int32, neutral="0", reduce_expr="max(a, b)",
                              map_expr="(int)(x[i] * 1000)", arguments="__global float *x")
    assert biggest(a).get() == int((x * 1000).astype(np.int32).max())
    out = cla.empty(queue, (), np.float32)
    result, _ = norm(a, out=out, return_event=True)
    assert result is out
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        ReductionKernel(ctx, np.float32, "0", "a+b", arguments="float *x, float *y")


@pytest.mark.parametrize("n", [1, 100, 65537])
def test_scans(ctx, queue, n):
    x = np.random.default_rng(n).integers(-5, 10, n).astype(np.int32)
    a = cla.to_device(queue, x)
    inclusive = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    np.testing.assert_array_equal(inclusive(a.copy()).get(), np.cumsum(x))
    exclusive = ExclusiveScanKernel(ctx, np.int32, "max(a, b)", neutral="-100")
    got = exclusive(a, cla.empty_like(a)).get()
    np.testing.assert_array_equal(got, np.maximum.accumulate(np.concatenate([[-100], x[:-1]])))


def test_scan_kernel_output_new_and_unknown_keywords(ctx, queue):
    """As PyOpenCL's: output_ary="new" scans into a new array; a keyword the call does not take
    (output=) is a TypeError, where it was ignored and the input scanned in place."""
    x = np.arange(1, 11, dtype=np.float32)
    a = cla.to_device(queue, x)
    inclusive = InclusiveScanKernel(ctx, np.float32, "a+b")
    scanned = inclusive(a, "new")
    np.testing.assert_array_equal(scanned.get(), np.cumsum(x))
    np.testing.assert_array_equal(a.get(), x)
    with pytest.raises(TypeError, match="output"):
        inclusive(a, output=cla.empty_like(a))
    np.testing.assert_array_equal(a.get(), x)


def test_several_launch_routines_order_their_launches_on_an_out_of_order_queue(ctx):
    """A scan's three stages, an elementwise kernel's main and tail launches and a two-stage
    reduction wait for each other by events: an out-of-order queue orders nothing itself,
    and the event a routine returns stands for all of its launches."""
    queue = ppcl.CommandQueue(
        ctx, properties=ppcl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    rng = np.random.default_rng(12)
    inclusive = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    twice = ElementwiseKernel(ctx, "int *y, const int *x", "y[i] = 2 * x[i]")
    for n in (65537, 300_001):
        x = rng.integers(-5, 10, n).astype(np.int32)
        scanned = [inclusive(cla.to_device(queue, x), queue=queue) for _ in range(3)]
        doubled = []
        for _ in range(3):
            source = cla.to_device(queue, x)
            y = cla.empty_like(source)
            y.add_event(twice(y, source, queue=queue))
            doubled.append(y)
        sums = [cla.sum(cla.to_device(queue, x), queue=queue) for _ in range(3)]
        for result in scanned:
            np.testing.assert_array_equal(result.get(), np.cumsum(x))
        for result in doubled:
            np.testing.assert_array_equal(result.get(), 2 * x)
        assert [int(s.get()) for s in sums] == [int(x.sum())] * 3


def test_generated_kernels_wait_for_their_arrays_events(ctx):
    """ElementwiseKernel, ReductionKernel, scans and clrandom wait for the events of the arrays
    they are given (a scan for its wait_for too), so a write held by a user event on an
    out-of-order queue is not overtaken."""
    queue = ppcl.CommandQueue(
        ctx, properties=ppcl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    n = 1000
    twice = ElementwiseKernel(ctx, "int *y, const int *x", "y[i] = 2 * x[i]")
    total = ReductionKernel(ctx, np.int32, "0", "a+b", "x[i]", "const int *x")
    inclusive = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    gate = ppcl.UserEvent(ctx)
    arrays = [cla.zeros(queue, (n,), dtype) for dtype in (np.int32, np.int32, np.float32)]
    source, ones, noise = arrays
    for array in arrays:
        array.finish()
    written = cla.arange(queue, n, dtype=np.int32)
    written.finish()
    source.add_event(ppcl.enqueue_copy(queue, source.data, written.data, wait_for=[gate]))
    held_ones = ppcl.enqueue_fill_buffer(queue, ones.data, np.int32(1), 0, 4 * n,
                                         wait_for=[gate])
    noise.add_event(ppcl.enqueue_fill_buffer(queue, noise.data, np.float32(5), 0, 4 * n,
                                             wait_for=[gate]))
    doubled = cla.empty_like(source)
    twice(doubled, source)
    summed = total(source)
    scanned = inclusive(ones, queue=queue, wait_for=[held_ones])
    clrandom.fill_rand(noise)
    gate.set_status(ppcl.command_execution_status.COMPLETE)
    np.testing.assert_array_equal(doubled.get(), 2 * np.arange(n))
    assert int(summed.get()) == n * (n - 1) // 2
    np.testing.assert_array_equal(scanned.get(), np.arange(1, n + 1))
    assert ((noise.get() >= 0) & (noise.get() < 1)).all()


def test_generic_scan_segmented_and_fetch(ctx, queue):
    rng = np.random.default_rng(1)
    x = rng.random(5000).astype(np.float64)
    starts = (rng.random(5000) < 0.02).astype(np.int8)
    a, flags = cla.to_device(queue, x), cla.to_device(queue, starts)
    out = cla.empty_like(a)
    total = cla.empty(queue, (1,), np.float64)
    scan = GenericScanKernel(
        ctx, np.float64, "__global double *x, __global char *flags, __global double *out, "
        "__global double *total", input_expr="x[i]", scan_expr="a+b", neutral="0",
        is_segment_start_expr="flags[i]",
        output_statement="out[i] = item; if (i == N - 1) total[0] = last_item")
    scan(a, flags, out, total)
    want, acc = np.empty_like(x), 0.0
    for i in range(x.size):
        acc = x[i] if (starts[i] or i == 0) else acc + x[i]
        want[i] = acc
    np.testing.assert_allclose(out.get(), want)
    np.testing.assert_allclose(total.get()[0], want[-1])
    diffs = GenericScanKernel(
        ctx, np.float64, "__global double *x, __global double *out", input_expr="x[i] - prev",
        scan_expr="a+b", neutral="0", output_statement="out[i] = item",
        input_fetch_exprs=[("prev", "x", -1)])
    diffs(a, out)
    np.testing.assert_allclose(out.get(), x, rtol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 5000])
def test_debug_scan_kernel_is_a_serial_generic_scan(ctx, queue, n):
    """PyOpenCL's reference scan takes GenericScanKernel's arguments and gives its results."""
    x = np.random.default_rng(2).integers(-50, 50, n).astype(np.int64)
    a = cla.to_device(queue, x)
    out = cla.empty_like(a)
    scan = GenericDebugScanKernel(
        ctx, np.int64, "__global long *x, __global long *out", input_expr="x[i]",
        scan_expr="a + b", neutral="0", output_statement="out[i] = prev_item")
    scan(a, out)
    np.testing.assert_array_equal(out.get(), np.cumsum(x) - x)


@pytest.mark.parametrize("neutral", ["0", None])
def test_generic_scan_arguments_named_like_its_locals(ctx, queue, neutral):
    """Arguments may take any name but the documented ones (item, prev_item, last_item, i,
    N): ``seg``, ``acc`` and ``item_in`` were redefined by the scan's own locals."""
    starts = np.zeros(100, np.int8)
    starts[::10] = 1
    ones, seg = cla.to_device(queue, np.ones(100, np.int32)), cla.to_device(queue, starts)
    acc = cla.empty_like(ones)
    segmented = GenericScanKernel(
        ctx, np.int32, "__global int *item_in, __global char *seg, __global int *acc",
        input_expr="item_in[i]", scan_expr="across_seg_boundary ? b : a + b", neutral="0",
        is_segment_start_expr="seg[i]", output_statement="acc[i] = item")
    segmented(ones, seg, acc)
    np.testing.assert_array_equal(acc.get(), np.tile(np.arange(1, 11), 10))
    running = GenericScanKernel(
        ctx, np.int32, "__global int *have, __global int *acc", input_expr="have[i]",
        scan_expr="a + b", neutral=neutral, output_statement="acc[i] = item")
    running(ones, acc)
    np.testing.assert_array_equal(acc.get(), np.arange(1, 101))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clmath(queue, dtype):
    x = np.linspace(0.1, 3, 257).astype(dtype)
    a = cla.to_device(queue, x)
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    for name, ref in [("sin", np.sin), ("cos", np.cos), ("exp", np.exp), ("log", np.log),
                      ("sqrt", np.sqrt), ("fabs", np.abs), ("tanh", np.tanh),
                      ("floor", np.floor), ("log10", np.log10), ("atan", np.arctan)]:
        got = getattr(clmath, name)(a - 1 if name == "fabs" else a)
        want = ref(x - 1 if name == "fabs" else x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.get(), want, rtol=rtol, err_msg=name)
    np.testing.assert_allclose(clmath.pow(a, 2.5).get(), x ** 2.5, rtol=rtol)
    np.testing.assert_allclose(clmath.atan2(a, a[::-1]).get(), np.arctan2(x, x[::-1]),
                               rtol=rtol)
    np.testing.assert_allclose(clmath.hypot(a, 2).get(), np.hypot(x, 2), rtol=rtol)
    # PyOpenCL's atan2pi(y, x): atan2 in half turns
    half_turns = clmath.atan2pi(y=a - 1, x=a[::-1] - 2)
    assert half_turns.dtype == dtype
    np.testing.assert_allclose(half_turns.get(), np.arctan2(x - 1, x[::-1] - 2) / np.pi,
                               rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(clmath.pow(2, a).get(), 2 ** x, rtol=rtol)
    one = a[:1]  # a one-element array broadcasts, as under operators
    np.testing.assert_allclose(clmath.atan2(one, a).get(), np.arctan2(x[:1], x), rtol=rtol)
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        clmath.atan2(a, a[:100])  # operands of two shapes
    ints = cla.to_device(queue, np.arange(5, dtype=np.int32))
    assert clmath.sqrt(ints).dtype == np.float64
    c = cla.to_device(queue, (x + 1j * x).astype(np.complex64))
    np.testing.assert_allclose(clmath.exp(c).get(), np.exp((x + 1j * x).astype(np.complex64)),
                               rtol=1e-5)
    np.testing.assert_allclose(clmath.sin(c).get(), np.sin((x + 1j * x).astype(np.complex64)),
                               rtol=1e-5)
    with pytest.raises(ppcl.LogicError, match="complex"):
        clmath.floor(c)


def test_clrandom(ctx, queue):
    u = clrandom.rand(queue, (200000,), np.float32).get()
    assert u.dtype == np.float32 and 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    k = clrandom.rand(queue, (100000,), np.int32, a=3, b=8).get()
    assert set(np.unique(k)) == {3, 4, 5, 6, 7}
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        clrandom.rand(queue, (10,), np.int32, a=5, b=5)  # an empty range, as numpy refuses
    g1, g2 = clrandom.PhiloxGenerator(ctx, seed=7), clrandom.PhiloxGenerator(ctx, seed=7)
    first = g1.normal(queue, (100000,), np.float64, mu=1, sigma=2).get()
    np.testing.assert_array_equal(first, g2.normal(queue, (100000,), np.float64, mu=1,
                                                   sigma=2).get())
    assert abs(first.mean() - 1) < 0.05 and abs(first.std() - 2) < 0.05
    assert not np.array_equal(first, g1.normal(queue, (100000,), np.float64).get())
    z = cla.zeros(queue, (10, 10), np.float32)
    clrandom.fill_rand(z[:, ::2])
    assert (z.get()[:, 1::2] == 0).all() and (z.get()[:, ::2] > 0).all()


def test_clrandom_fill_returns_the_event(ctx, queue):
    """fill_uniform and fill_normal return the event of the fill, as PyOpenCL's do, for
    contiguous, strided and vector arrays: they returned the array, so
    ``gen.fill_uniform(x).wait()`` failed."""
    gen = clrandom.ThreefryGenerator(ctx, seed=3)
    x = cla.zeros(queue, (64,), np.float32)
    event = gen.fill_uniform(x, a=2, b=3)
    assert isinstance(event, ppcl.Event)
    event.wait()
    assert ((x.get() >= 2) & (x.get() < 3)).all()
    z = cla.zeros(queue, (8, 8), np.float64)
    gen.fill_normal(z[:, ::2], mu=5).wait()
    assert (z.get()[:, 1::2] == 0).all() and (z.get()[:, ::2] != 0).all()
    v = cla.zeros(queue, (4,), ppcl.cltypes.float4)
    assert isinstance(gen.fill_uniform(v), ppcl.Event)
    assert gen.uniform(queue, (3,), np.float32).shape == (3,)


def test_tools_dtypes(ctx):
    assert tools.dtype_to_ctype(np.float32) == "float"
    assert tools.dtype_to_ctype(np.complex64) == "cfloat_t"
    assert tools.dtype_to_ctype(ppcl.cltypes.uint4) == "uint4"
    pair = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.int32)])
    padded, decl = tools.match_dtype_to_c_struct(ctx.devices[0], "pair_t", pair)
    assert padded.fields["b"][1] == 8 and padded.fields["c"][1] == 16 and padded.itemsize == 24
    measured = cla.zeros(ppcl.CommandQueue(ctx), 4, np.int64)
    ElementwiseKernel(ctx, "long *out", "__global pair_t *p = 0; "
                      "out[0] = (long)((__global char *)&p->b - (__global char *)p); "
                      "out[1] = (long)((__global char *)&p->c - (__global char *)p); "
                      "out[2] = (long)sizeof(pair_t); out[3] = 0", preamble=decl,
                      )(measured, range=slice(0, 1, 1))
    assert measured.get().tolist()[:3] == [8, 16, 24]  # the device's own layout
    assert tools.get_or_register_dtype("pair_t", padded) == padded
    assert tools.dtype_to_ctype(padded) == "pair_t"
    values = np.zeros(5, padded)
    values["b"] = np.arange(5)
    values["c"] = 2
    a = cla.to_device(ppcl.CommandQueue(ctx), values)
    total = ReductionKernel(ctx, np.float64, "0", "a+b", "p[i].b * p[i].c",
                            "__global pair_t *p", preamble=decl)
    assert total(a).get() == 20.0
    with pytest.raises(ValueError, match="register"):
        tools.dtype_to_ctype(np.dtype([("q", np.int8)]))


def test_a_registered_name_keeps_its_dtype():
    # as PyOpenCL: registering a name again with another dtype is an error; it was ignored,
    # and kernels declaring the name were checked against the first dtype
    first = np.dtype([("x", np.int32), ("y", np.float32)])
    assert tools.get_or_register_dtype("reg_twice_t", first) == first
    assert tools.get_or_register_dtype("reg_twice_t", first) == first  # the same again: fine
    with pytest.raises(RuntimeError, match="'reg_twice_t' is already registered"):
        tools.get_or_register_dtype("reg_twice_t", np.dtype([("x", np.float64)]))
    assert tools.get_or_register_dtype("reg_twice_t") == first


def test_match_dtype_to_c_struct_aligns_vector_members(ctx):
    # a vector member aligns to its size (a 3-vector's to 4 elements) and sets the struct's
    # alignment: the float4 was put at offset 4 and the struct's tail left unpadded, as a
    # vector's dtype has fields (s0, s1, ...) whose alignment was taken for the vector's
    queue = ppcl.CommandQueue(ctx)
    rec = np.dtype([("c", np.int8), ("v", ppcl.cltypes.float4), ("w", ppcl.cltypes.float3),
                    ("m", np.float32)])
    padded, decl = tools.match_dtype_to_c_struct(ctx.devices[0], "vrec_t", rec)
    assert [padded.fields[n][1] for n in ("v", "w", "m")] == [16, 32, 48]
    assert padded.itemsize == 64
    values = np.zeros(2, padded)
    values["v"]["w"] = [1, 2]
    values["w"]["z"] = [3, 4]
    values["m"] = [5, 6]
    prg = ppcl.Program(ctx, decl + """
    __kernel void k(__global vrec_t *r, __global float *out) {
        int i = get_global_id(0);
        out[i] = r[i].v.w * 100 + r[i].w.z * 10 + r[i].m + sizeof(vrec_t) * 1000;
    }""").build()
    buf = ppcl.Buffer(ctx, ppcl.mem_flags.READ_ONLY | ppcl.mem_flags.COPY_HOST_PTR,
                      hostbuf=values)
    out = np.zeros(2, np.float32)
    out_buf = ppcl.Buffer(ctx, ppcl.mem_flags.WRITE_ONLY, out.nbytes)
    prg.k(queue, (2,), None, buf, out_buf)
    ppcl.enqueue_copy(queue, out, out_buf)
    assert out.tolist() == [64135.0, 64246.0]


def _run_example(module: str, env: dict[str, str]) -> str:
    source = (ROOT / "examples" / "array_program.py").read_text()
    if module != "ppcl":
        source = re.sub(r"\bppcl\b", module, source)
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_example_runs_on_ppcl_and_pyopencl():
    env = child_env()
    lines = _run_example("ppcl", env).splitlines()
    assert len(lines) == 14 and all(" ok " in line for line in lines), lines
    try:
        import mako  # noqa: F401 - pyopencl's kernel templates need it
        import pyopencl
    except ImportError:
        pytest.skip("pyopencl (with mako) is not installed")
    env["OCL_ICD_VENDORS"] = env.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    env["PYOPENCL_CTX"] = "0"
    try:
        pyopencl.get_platforms()
    except pyopencl.Error:
        pytest.skip("no OpenCL platform for pyopencl")
    theirs = _run_example("pyopencl", env).splitlines()
    assert [line.split()[0] for line in theirs] == [line.split()[0] for line in lines]
    assert all(" ok " in line for line in theirs), theirs


@pytest.mark.parametrize("hash_name,key,counter,want", [
    ("philox", "0, 0", "0, 0, 0, 0", [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ("philox", "0xa4093822, 0x299f31d0", "0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344",
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ("threefry", "0, 0, 0, 0", "0, 0, 0, 0", [0x9C6CA96A, 0xE17EAE66, 0xFC10ECD4, 0x5256A7D8]),
    ("threefry", "0xa4093822, 0x299f31d0, 0x082efa98, 0xec4e6c89",
     "0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344",
     [0x59CD1DBB, 0xB8879579, 0x86B5D00C, 0xAC8B6D84]),
])
def test_random123_known_answers(ctx, queue, hash_name, key, counter, want):
    out = cla.zeros(queue, 4, np.uint32)
    width = 2 if hash_name == "philox" else 4
    ElementwiseKernel(ctx, "uint *out",
                      f"uint4 r = ppcl_{hash_name}((uint4)({counter}), (uint{width})({key}));"
                      "out[0] = r.x; out[1] = r.y; out[2] = r.z; out[3] = r.w",
                      preamble=clrandom.PHILOX if hash_name == "philox" else clrandom.THREEFRY,
                      )(out, range=slice(0, 1, 1))
    assert out.get().tolist() == want


def test_threefry_generator(ctx, queue):
    g = clrandom.ThreefryGenerator(ctx, seed=3)
    u = g.uniform(queue, (100000,), np.float64, a=-1, b=1).get()
    assert -1 <= u.min() and u.max() < 1 and abs(u.mean()) < 0.01
    again = clrandom.ThreefryGenerator(ctx, seed=3).uniform(queue, (100000,), np.float64,
                                                             a=-1, b=1).get()
    np.testing.assert_array_equal(u, again)
    with pytest.raises(ppcl.LogicError, match="key"):
        clrandom.ThreefryGenerator(ctx, key=[1, 2])


def test_random_parameters_as_arrays_and_vector_dtypes(ctx, queue):
    """mu and sigma (or a and b) may be arrays of the result's shape, read per element (they
    were passed as scalars: CL_INVALID_ARG_SIZE naming a generated kernel's argument); vector
    dtypes (cltypes.float4), which PyOpenCL fills, are filled element by element."""
    g = clrandom.PhiloxGenerator(ctx, seed=11)
    n = 100_000
    centers = np.linspace(0, 100, n).astype(np.float32)
    mu = cla.to_device(queue, centers)
    sigma = cla.to_device(queue, np.full(n, 0.5, np.float32))
    z = g.normal(queue, n, np.float32, mu=mu, sigma=sigma).get() - centers
    assert abs(z.mean()) < 0.01 and abs(z.std() - 0.5) < 0.01
    u = g.uniform(queue, n, np.float32, a=mu, b=mu + 2).get() - centers
    assert 0 <= u.min() and u.max() < 2.0001 and abs(u.mean() - 1) < 0.01
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE.*shape and dtype"):
        g.normal(queue, n, np.float32, mu=mu[:10])
    for dtype in (ppcl.cltypes.float4, ppcl.cltypes.float2):
        v = g.uniform(queue, 20_000, dtype, a=-1, b=3).get().view(np.float32)
        assert -1 <= v.min() and v.max() < 3 and abs(v.mean() - 1) < 0.02
        w = g.normal(queue, 20_000, dtype).get().view(np.float32)
        assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


def test_integer_bounds_as_arrays_are_checked_per_element(ctx, queue):
    """Integers in [a, b) are drawn modulo b - a: scalar bounds with b <= a were refused,
    array bounds were not, and an element with b <= a got whatever the modulo gave."""
    g = clrandom.PhiloxGenerator(ctx, seed=3)
    low = cla.to_device(queue, np.arange(8, dtype=np.int32))
    drawn = g.uniform(queue, 8, np.int32, a=low, b=low + 3).get()
    assert ((drawn >= np.arange(8)) & (drawn < np.arange(8) + 3)).all()
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE.*b <= a at some"):
        g.uniform(queue, 8, np.int32, a=low, b=3)
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE.*b <= a at some"):
        g.uniform(queue, 4, np.uint32, a=cla.to_device(queue, np.array([5, 1, 1, 1], np.uint32)),
                  b=3)


def test_argument_objects_and_vector_results(ctx, queue):
    x = np.random.default_rng(5).random(3000).astype(np.float32) - 0.5
    a = cla.to_device(queue, x)
    out = cla.empty_like(a)
    ElementwiseKernel(ctx, [tools.VectorArg(np.float32, "x"), tools.ScalarArg(np.float32, "s"),
                            tools.VectorArg(np.float32, "out")], "out[i] = s * x[i]")(a, 3, out)
    np.testing.assert_allclose(out.get(), 3 * x)
    min_max = ReductionKernel(ctx, ppcl.cltypes.float2, "(float2)(INFINITY, -INFINITY)",
                              "(float2)(fmin(a.x, b.x), fmax(a.y, b.y))",
                              "(float2)(x[i], x[i])", "__global float *x")
    low, high = min_max(a).get()[()]["s0"], min_max(a).get()[()]["s1"]
    assert (low, high) == (x.min(), x.max())


def test_reduction_and_scan_kernels_refuse_strided_views(ctx, queue):
    # the generated kernels index from a view's offset with unit stride: a ReductionKernel
    # over x[::2] and x[1::2] returned 20 for 68, a scan of x[::2] scanned x[:5]
    x = cla.to_device(queue, np.arange(10, dtype=np.int32))
    dot = ReductionKernel(ctx, np.int32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                          arguments="__global int *x, __global int *y")
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*contiguous.*'x'"):
        dot(x[::2], x[1::2])
    assert dot(x[::2].copy(), x[1::2].copy()).get() == np.dot(np.arange(0, 10, 2),
                                                              np.arange(1, 10, 2))
    assert dot(x[2:], x[2:]).get() == np.dot(np.arange(2, 10), np.arange(2, 10))  # offset only
    scan = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*contiguous"):
        scan(x[::2])
    # a shorter output was written past its end; a numpy input failed with AttributeError
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*3 elements"):
        scan(x, cla.empty(queue, 3, np.int32))
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_ARG_VALUE.*ndarray"):
        scan(np.arange(5, dtype=np.int32))


@pytest.mark.parametrize("n", [1, 100, 65537])
def test_inclusive_scan_without_a_neutral_element(ctx, queue, n):
    # PyOpenCL builds InclusiveScanKernel(ctx, dtype, scan_expr) without neutral; ppcl refused
    # it. Each chunk starts from its first item, so no value stands in for "nothing yet".
    x = np.random.default_rng(n).uniform(-5, 10, n).astype(np.float32)
    running_min = InclusiveScanKernel(ctx, np.float32, "fmin(a, b)")
    np.testing.assert_array_equal(running_min(cla.to_device(queue, x)).get(),
                                  np.minimum.accumulate(x))
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*neutral"):
        ExclusiveScanKernel(ctx, np.float32, "a+b")


def test_range_arguments_need_a_stop_and_a_step_other_than_zero(ctx, queue):
    # a range without a stop was a TypeError from inside ppcl; a step of 0 was taken for 1
    ramp = ElementwiseKernel(ctx, "float *y", "y[i] = i")
    total = ReductionKernel(ctx, np.float32, "0", "a+b", "x[i]", "__global float *x")
    y = cla.zeros(queue, 8, np.float32)
    for bad in (slice(2, None), slice(0, 4, 0), slice(0.0, 4)):
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*range"):
            ramp(y, range=bad)
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*range"):
            total(y, range=bad)
    ramp(y, range=slice(7, 0, -2))
    np.testing.assert_array_equal(y.get(), [0, 1, 0, 3, 0, 5, 0, 7])
    assert total(y, range=slice(1, 8, 2)).get() == 16


# PyOpenCL's complex helpers, as a preamble includes them; numpy's result for each
_COMPLEX_CALLS = {
    "cfloat_mul(z[i], w[i])": lambda z, w, r: z * w,
    "cfloat_divide(z[i], w[i])": lambda z, w, r: z / w,
    "cfloat_sqrt(z[i])": lambda z, w, r: np.sqrt(z),
    "cfloat_log(z[i])": lambda z, w, r: np.log(z),
    "cfloat_exp(z[i])": lambda z, w, r: np.exp(z),
    "cfloat_pow(z[i], w[i])": lambda z, w, r: z ** w,
    "cfloat_powr(z[i], r[i])": lambda z, w, r: z ** r,
    "cfloat_rpow(r[i], z[i])": lambda z, w, r: r ** z,
    "cfloat_tan(z[i])": lambda z, w, r: np.tan(z),
    "cfloat_tanh(z[i])": lambda z, w, r: np.tanh(z),
    "cfloat_rdivide(r[i], z[i])": lambda z, w, r: r / z,
    "cfloat_rsub(r[i], z[i])": lambda z, w, r: r - z,
    "cfloat_fromreal(cfloat_arg(z[i]))": lambda z, w, r: np.angle(z),
    "cfloat_fma(z[i], w[i], cfloat_fromreal(r[i]))": lambda z, w, r: z * w + r,
}


@pytest.mark.parametrize("call", list(_COMPLEX_CALLS))
def test_pyopencl_complex_header_in_a_preamble(ctx, queue, call):
    from ppcl.elementwise import ElementwiseKernel

    rng = np.random.default_rng(len(call))
    z = (rng.standard_normal(33) + 1j * rng.standard_normal(33)).astype(np.complex64)
    w = (rng.standard_normal(33) + 1j * rng.standard_normal(33)).astype(np.complex64)
    r = rng.uniform(0.5, 2, 33).astype(np.float32)
    knl = ElementwiseKernel(ctx, "cfloat_t *out, cfloat_t *z, cfloat_t *w, float *r",
                            f"out[i] = {call}", preamble="#include <pyopencl-complex.h>")
    out = cla.empty(queue, 33, np.complex64)
    knl(out, cla.to_device(queue, z), cla.to_device(queue, w), cla.to_device(queue, r))
    want = _COMPLEX_CALLS[call](z.astype(np.complex128), w, r.astype(np.float64))
    np.testing.assert_allclose(out.get(), want, rtol=2e-5, atol=2e-6)


def test_pyopencl_complex_header_double_after_its_define(ctx, queue):
    from ppcl.elementwise import ElementwiseKernel

    preamble = "#define PYOPENCL_DEFINE_CDOUBLE\n#include <pyopencl-complex.h>"
    knl = ElementwiseKernel(ctx, "cdouble_t *out, cfloat_t *z",
                            "out[i] = cdouble_sqrt(cdouble_cast(z[i]))", preamble=preamble)
    z = np.array([4, -4, 3 + 4j, -1j], np.complex64)
    out = cla.empty(queue, 4, np.complex128)
    knl(out, cla.to_device(queue, z))
    np.testing.assert_allclose(out.get(), np.sqrt(z.astype(np.complex128)), rtol=1e-12)
    fma = ElementwiseKernel(ctx, "cdouble_t *out, cdouble_t *a",
                            "out[i] = cdouble_fma(a[i], a[i], a[i])", preamble=preamble)
    a = z.astype(np.complex128)
    fma(out, cla.to_device(queue, a))
    np.testing.assert_allclose(out.get(), a * a + a, rtol=1e-15)
    # without the define, cdouble_t is not declared, as in PyOpenCL
    with pytest.raises(ppcl.Error):
        ElementwiseKernel(ctx, "cfloat_t *z", "z[i] = cfloat_cast(cdouble_new(1, 2))",
                          preamble="#include <pyopencl-complex.h>")(cla.to_device(queue, z))


def test_clmath_ldexp_frexp_modf_as_numpy(queue):
    x = np.array([0, -0.0, 1.5, -3.25, 1e-40, 7e30, -0.75, 8, np.inf, -2.5], np.float32)
    n = np.array([0, 1, 2, -3, 4, -5, 6, 1, 2, -1], np.int32)
    d_x = cla.to_device(queue, x)
    np.testing.assert_array_equal(clmath.ldexp(d_x, cla.to_device(queue, n)).get(),
                                  np.ldexp(x, n))
    np.testing.assert_array_equal(clmath.ldexp(d_x, 3).get(), np.ldexp(x, 3))
    significand, exponent = clmath.frexp(d_x[::-1])  # a view: run over a contiguous copy
    want_s, want_e = np.frexp(x[::-1])
    np.testing.assert_array_equal(significand.get(), want_s)
    np.testing.assert_array_equal(exponent.get()[:-2], want_e[:-2])  # frexp(inf): unspecified
    assert exponent.dtype == np.int32
    fraction, whole = clmath.modf(cla.to_device(queue, x.astype(np.float64)))
    want_f, want_w = np.modf(x.astype(np.float64))
    np.testing.assert_array_equal(fraction.get(), want_f)
    np.testing.assert_array_equal(whole.get(), want_w)
    integers = clmath.modf(cla.to_device(queue, np.array([3, -4], np.int32)))
    assert integers[0].dtype == np.float64
    # real exponents are truncated toward zero, as PyOpenCL's kernel casts them to int
    np.testing.assert_array_equal(clmath.ldexp(d_x, 1.5).get(), np.ldexp(x, 1))
    real_n = cla.to_device(queue, n + np.float32(0.75) * np.sign(n))
    np.testing.assert_array_equal(clmath.ldexp(d_x, real_n).get(), np.ldexp(x, n))
    with pytest.raises(ppcl.Error, match="complex"):
        clmath.ldexp(d_x, cla.to_device(queue, n.astype(np.complex64)))
    with pytest.raises(ppcl.Error, match="past int"):  # not converted to int silently
        clmath.ldexp(d_x, 2**40)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_and_clmath_functions(queue, dtype):
    rng = np.random.default_rng(5)
    z = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(dtype)
    w = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(dtype)
    d_z, d_w = cla.to_device(queue, z), cla.to_device(queue, w)
    tolerance = 2e-6 if dtype == np.complex64 else 1e-13
    for got, want in [(clmath.sqrt(d_z), np.sqrt(z)), (clmath.log(d_z), np.log(z)),
                      (clmath.sin(d_z), np.sin(z)), (clmath.cosh(d_z), np.cosh(z)),
                      (clmath.tanh(d_z), np.tanh(z)), (d_z ** 2, z ** 2), (d_z ** d_w, z ** w),
                      (2 ** d_z, 2 ** z), (d_z ** 0.5, z ** 0.5)]:
        assert got.dtype == dtype
        error = np.abs(got.get() - want) / np.maximum(np.abs(want), 1)
        assert error.max() < tolerance
    with pytest.raises(ppcl.Error):
        clmath.floor(d_z)  # no order, no floor
