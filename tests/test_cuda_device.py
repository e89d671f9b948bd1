"""The CUDA device on a GPU: kernels against numpy, memory commands, events, queues and the
cubin cache. Skipped where there is no GPU (or no cupy); there, the platform list must be
what it always was."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.cuda import gpu_count
from tests.child_env import child_env

mf = cl.mem_flags
GPUS = gpu_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="no CUDA GPU (or no cupy) here")


def test_platforms_list_cuda_only_where_there_are_gpus():
    platforms = cl.get_platforms()
    assert platforms[0].name == "ppcl"
    if GPUS == 0:
        assert len(platforms) == 1
    else:
        cuda = platforms[1]
        assert cuda.name == "ppcl CUDA"
        devices = cuda.get_devices()
        assert len(devices) == GPUS
        assert all(d.type == cl.device_type.GPU for d in devices)


@pytest.fixture(scope="module")
def gctx():
    if GPUS == 0:
        pytest.skip("no CUDA GPU (or no cupy) here")
    return cl.Context([cl.get_platforms()[1].get_devices()[0]])


@pytest.fixture(scope="module")
def gqueue(gctx):
    return cl.CommandQueue(gctx, properties=cl.command_queue_properties.PROFILING_ENABLE)


def _build(ctx, source: str, options: str = ""):
    return cl.Program(ctx, source).build(options=options)


@needs_gpu
def test_device_info_describes_the_gpu(gctx):
    dev = gctx.devices[0]
    assert dev.max_compute_units > 1
    assert dev.max_work_group_size >= 256
    assert dev.global_mem_size > 1 << 30
    assert dev.local_mem_size >= 48 * 1024


@needs_gpu
def test_saxpy_with_profiling(gctx, gqueue):
    n = 1 << 20
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    y = np.random.default_rng(2).random(n, dtype=np.float32)
    prg = _build(gctx, """
        __kernel void saxpy(float a, __global const float *x, __global float *y) {
            size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }""")
    bx = cl.Buffer(gctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(gctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    event = prg.saxpy(gqueue, (n,), None, np.float32(2.5), bx, by)
    out = np.empty_like(y)
    cl.enqueue_copy(gqueue, out, by)
    np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
    assert event.profile.end >= event.profile.start > 0


@needs_gpu
def test_local_argument_reduction_with_offset(gctx, gqueue):
    from tests.kernel_sources import REDUCE

    n, group = 1 << 16, 128
    a = np.arange(n, dtype=np.float32) % 7
    prg = _build(gctx, REDUCE)
    bin_ = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=a)
    bout = cl.Buffer(gctx, mf.WRITE_ONLY, n // group * 4)
    prg.reduce(gqueue, (n,), (group,), bin_, bout, cl.LocalMemory(group * 4))
    out = np.empty(n // group, dtype=np.float32)
    cl.enqueue_copy(gqueue, out, bout)
    np.testing.assert_allclose(out, a.reshape(-1, group).sum(axis=1))

    ids = _build(gctx, """__kernel void ids(__global int *o) {
        o[get_global_id(0) - get_global_offset(0)] = get_global_id(0) + 100 * get_work_dim(); }""")
    bo = cl.Buffer(gctx, mf.WRITE_ONLY, 64 * 4)
    ids.ids(gqueue, (64,), (32,), bo, global_offset=(5,))
    got = np.empty(64, dtype=np.int32)
    cl.enqueue_copy(gqueue, got, bo)
    np.testing.assert_array_equal(got, np.arange(5, 69) + 100)


@needs_gpu
def test_vectors_tiles_and_atomics(gctx, gqueue):
    prg = _build(gctx, """
        __kernel void scale(__global float4 *v, float s) {
            size_t i = get_global_id(0);
            float4 a = v[i];
            v[i] = (float4)(a.wz, a.yx) * s + (float4)(1.0f);
        }
        __kernel void hist(__global const uint *in, __global int *bins) {
            __local int local_bins[16];
            uint lid = get_local_id(0);
            if (lid < 16) local_bins[lid] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            atomic_inc(&local_bins[in[get_global_id(0)] % 16]);
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < 16) atomic_add(&bins[lid], local_bins[lid]);
        }""")
    v = np.arange(4096 * 4, dtype=np.float32).reshape(-1, 4)
    bv = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=v)
    prg.scale(gqueue, (4096,), None, bv, np.float32(0.5))
    got = np.empty_like(v)
    cl.enqueue_copy(gqueue, got, bv)
    np.testing.assert_allclose(got, v[:, [3, 2, 1, 0]] * 0.5 + 1)

    data = np.random.default_rng(3).integers(0, 1000, 1 << 16).astype(np.uint32)
    bd = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=data)
    bins = cl.Buffer(gctx, mf.READ_WRITE, 16 * 4)
    cl.enqueue_fill_buffer(gqueue, bins, np.int32(0), 0, 16 * 4)
    prg.hist(gqueue, data.shape, (256,), bd, bins)
    counts = np.empty(16, dtype=np.int32)
    cl.enqueue_copy(gqueue, counts, bins)
    np.testing.assert_array_equal(counts, np.bincount(data % 16, minlength=16))


@needs_gpu
def test_sub_buffers_rect_copies_fills_and_maps(gctx, gqueue):
    a = np.arange(64 * 64, dtype=np.float32)
    buf = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=a)
    sub = buf.get_sub_region(1024, 1024)
    cl.enqueue_fill_buffer(gqueue, sub, np.float32(-1), 0, 1024)
    whole = np.empty_like(a)
    cl.enqueue_copy(gqueue, whole, buf)
    expected = a.copy()
    expected[256:512] = -1
    np.testing.assert_array_equal(whole, expected)

    block = np.empty((8, 16), dtype=np.float32)
    cl.enqueue_copy(gqueue, block, buf, buffer_origin=(4 * 4, 2, 0), host_origin=(0, 0, 0),
                    region=(16 * 4, 8, 1), buffer_pitches=(64 * 4, 0))
    np.testing.assert_array_equal(block, expected.reshape(64, 64)[2:10, 4:20])

    mapped, _ = cl.enqueue_map_buffer(gqueue, buf, cl.map_flags.WRITE, 0, (64,), np.float32)
    mapped[:] = 7
    mapped.base.release()
    first = np.empty(64, dtype=np.float32)
    cl.enqueue_copy(gqueue, first, buf)
    np.testing.assert_array_equal(first, 7)


@needs_gpu
def test_out_of_order_queue_and_two_queues(gctx):
    prg = _build(gctx, """__kernel void add(__global int *a, int k) {
        a[get_global_id(0)] += k; }""")
    ooo = cl.CommandQueue(gctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    other = cl.CommandQueue(gctx)
    a = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=np.zeros(1 << 16, dtype=np.int32))
    b = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=np.zeros(1 << 16, dtype=np.int32))
    first = prg.add(ooo, (1 << 16,), None, a, np.int32(1))
    second = prg.add(ooo, (1 << 16,), None, a, np.int32(2), wait_for=[first])
    prg.add(other, (1 << 16,), None, b, np.int32(5))
    second.wait()
    other.finish()
    got_a, got_b = np.empty(1 << 16, np.int32), np.empty(1 << 16, np.int32)
    cl.enqueue_copy(other, got_a, a)
    cl.enqueue_copy(other, got_b, b)
    assert (got_a == 3).all() and (got_b == 5).all()


@needs_gpu
def test_cubins_come_from_the_cache_the_second_time(gctx, private_cache):
    from ppcl.compiler.codegen.cuda import cuda_unit
    from ppcl.compiler.frontend import compile_source
    from ppcl.devices.cuda.nvrtc import cached_cubin

    source = cuda_unit(compile_source("__kernel void k(__global int *a) { a[0] = 1; }",
                                      "k.cl", "").module)
    device = gctx.devices[0].backend
    first = cached_cubin(source, ["--std=c++17"], device.arch)
    second = cached_cubin(source, ["--std=c++17"], device.arch)
    assert not first.cached and second.cached
    assert first.data == second.data


@needs_gpu
def test_a_buffer_passed_twice_runs_the_kernel_as_written(gctx, gqueue):
    # with restrict pointers the compiler may read x[i] before y[i] = 0 is stored
    prg = _build(gctx, """__kernel void k(__global const int *x, __global int *y) {
        size_t i = get_global_id(0); y[i] = 0; y[i] += x[i]; }""")
    ones = np.ones(1 << 12, dtype=np.int32)
    a = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=ones)
    b = cl.Buffer(gctx, mf.READ_WRITE, ones.nbytes)
    prg.k(gqueue, ones.shape, None, a, a)
    prg.k(gqueue, ones.shape, None, a, b)
    got_a, got_b = np.empty_like(ones), np.empty_like(ones)
    cl.enqueue_copy(gqueue, got_a, a)
    cl.enqueue_copy(gqueue, got_b, b)
    assert (got_a == 0).all() and (got_b == 0).all()
    c = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=ones)
    prg.k(gqueue, ones.shape, None, c, b)
    cl.enqueue_copy(gqueue, got_b, b)
    assert (got_b == 1).all()


@pytest.mark.skipif(GPUS > 0, reason="a CUDA GPU is here")
@needs_gpu
def test_as_type_and_bitselect_compile_with_nvrtc_and_keep_the_bytes(gctx, gqueue):
    # the header's byte copies were __builtin_memcpy, which nvcc accepts and NVRTC does not
    prg = _build(gctx, """
__kernel void k(__global int2 *a, __global uint *b, __global float *f) {
    size_t i = get_global_id(0);
    uint2 u = as_uint2(a[i]);
    b[i] = as_uint((int)u.x) + u.y;
    f[i] = bitselect(f[i], -f[i], as_float(0x80000000u));
}""")
    n = 256
    a = np.random.default_rng(3).integers(-1000, 1000, (n, 2)).astype(np.int32)
    f = np.random.default_rng(4).random(n, dtype=np.float32)
    da = cl.Buffer(gctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(gctx, mf.READ_WRITE, n * 4)
    df = cl.Buffer(gctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=f)
    prg.k(gqueue, (n,), None, da, db, df)
    b, got = np.empty(n, np.uint32), np.empty(n, np.float32)
    cl.enqueue_copy(gqueue, b, db)
    cl.enqueue_copy(gqueue, got, df)
    np.testing.assert_array_equal(b, a.view(np.uint32).sum(axis=1, dtype=np.uint32))
    np.testing.assert_array_equal(got, -f)  # the sign bit taken from -f


@needs_gpu
def test_use_host_ptr_buffers_run_on_a_mirror_and_the_host_array_follows(gctx, gqueue):
    """A kernel on a buffer over the program's own array (USE_HOST_PTR), whole and through a
    sub-buffer: the array changes as on the CPU device, and the GPU's context stays usable
    (a kernel touching the host array itself would fault and end it)."""
    prg = _build(gctx, """
__kernel void scale(__global const float *a, __global float *b, float s) {
    size_t i = get_global_id(0);
    b[i] = a[i] * s;
}""")
    n = 4096
    host = np.arange(n, dtype=np.float32)
    hbuf = cl.Buffer(gctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)
    prg.scale(gqueue, (n,), None, hbuf, hbuf, np.float32(3)).wait()
    np.testing.assert_array_equal(host, np.arange(n, dtype=np.float32) * 3)
    host[:] = 1  # the host writes its array between launches: the next launch sees it
    other = np.zeros(n, np.float32)
    obuf = cl.Buffer(gctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=other)
    prg.scale(gqueue, (n,), None, hbuf, obuf, np.float32(2)).wait()
    np.testing.assert_array_equal(other, np.full(n, 2, np.float32))
    np.testing.assert_array_equal(host, np.ones(n, np.float32))
    half = obuf.get_sub_region(n * 2, n * 2)  # the second half, in bytes
    prg.scale(gqueue, (n // 2,), None, hbuf, half, np.float32(5)).wait()
    np.testing.assert_array_equal(other[: n // 2], np.full(n // 2, 2, np.float32))
    np.testing.assert_array_equal(other[n // 2:], np.full(n // 2, 5, np.float32))
    dbuf = cl.Buffer(gctx, mf.READ_WRITE, n * 4)  # device memory still works afterwards
    prg.scale(gqueue, (n,), None, hbuf, dbuf, np.float32(7))
    out = np.empty(n, np.float32)
    cl.enqueue_copy(gqueue, out, dbuf)
    np.testing.assert_array_equal(out, np.full(n, 7, np.float32))


@pytest.mark.skipif(GPUS > 0, reason="this machine has a CUDA GPU")
def test_asking_for_cuda_without_a_gpu_says_what_is_missing():
    from ppcl.devices import UnknownDeviceError, cuda_device

    with pytest.raises(UnknownDeviceError, match="no CUDA GPU here"):
        cuda_device(0)


@pytest.mark.parametrize("options, contracts", [
    ("", False), ("-cl-mad-enable", True), ("-cl-unsafe-math-optimizations", True),
    ("-cl-fast-relaxed-math", True), ("-cl-no-signed-zeros", False)])
def test_nvrtc_contracts_into_fma_only_where_the_build_options_allow(options, contracts):
    """A product and a sum stay two rounded operations unless the program allows ``mad``
    (as the CPU device's -ffp-contract=off): fused overlay kernels then give the bits of the
    kernels they fuse. Read without a GPU: the options are a function of the build options."""
    from ppcl.compiler.frontend import parse_build_options
    from ppcl.devices.cuda.device import nvrtc_options

    flags = nvrtc_options(parse_build_options(options))
    assert ("--fmad=false" not in flags) == contracts


@pytest.mark.parametrize(("version", "options", "quick"), [
    ((13, 0), "", True), ((12, 9), "-cl-fast-relaxed-math", True),
    ((13, 0), "-cl-opt-disable", False), ((12, 8), "", False), ((12, 4), "", False)])
def test_the_first_module_is_quick_where_nvrtc_can(monkeypatch, version, options, quick):
    """A build waits for a quick compile (``--Ofast-compile=max``, NVRTC 12.9 on) of the
    whole program, fully optimized otherwise; the header is parsed once per process from
    12.8 on. Read without a GPU: the options are a function of the build options and
    NVRTC's version."""
    from ppcl.compiler.frontend import parse_build_options
    from ppcl.devices.cuda import device

    monkeypatch.setattr(device, "nvrtc_version_tuple", lambda: version)
    parsed = parse_build_options(options)
    full = device.nvrtc_options(parsed)
    first = device.quick_options(parsed)
    assert (first is not None) == quick
    assert ("-pch" in full) == (version >= (12, 8))
    assert device.QUICK_FLAG not in full
    if first is not None:
        assert first == [*full, device.QUICK_FLAG]


def _optimized_builds_done() -> None:
    import threading

    for thread in threading.enumerate():
        if thread.name.startswith("ppcl-cuda-optimized"):
            thread.join(timeout=120)


@needs_gpu
def test_launches_move_to_the_optimized_module_once_it_is_loaded(gctx, gqueue,
                                                                 private_cache):
    """The program's first module is compiled quickly; the fully optimized one follows on a
    thread, and launches use it (its ``__noalias`` copy where the buffers are disjoint)
    from the first launch after it is loaded, with the same results."""
    program = cl.Program(gctx, """
        __kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }
        __kernel void axpy(__global const float *x, __global float *y, float a) {
            size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }""").build()
    device_program = program._device_program(gctx.devices[0])
    x = np.arange(1 << 12, dtype=np.float32)
    y = np.ones_like(x)
    xb = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=y)
    results = []
    for _ in range(2):
        program.scale(gqueue, x.shape, None, xb, np.float32(0.5))
        program.axpy(gqueue, x.shape, None, xb, yb, np.float32(2))
        got = np.empty_like(y)
        cl.enqueue_copy(gqueue, got, yb)
        results.append(got)
        _optimized_builds_done()
    assert device_program.optimized_ready, device_program.optimized_error
    x2 = x * np.float32(0.5)
    y1 = np.float32(2) * x2 + y
    x3 = x2 * np.float32(0.5)
    np.testing.assert_array_equal(results[0], y1)
    np.testing.assert_array_equal(results[1], np.float32(2) * x3 + y1)
    launches = {name: launch for (name, _), launch in device_program._launches.items()}
    assert launches["scale"]._packed[2][0].value == device_program.optimized_function(
        "scale", noalias=False)
    assert launches["axpy"]._packed[2][0].value == device_program.optimized_function(
        "axpy", noalias=True)
    assert device_program.optimized_function("scale", noalias=True) is None
    for launch in launches.values():  # the native launch calls the same function
        if launch._packed[9] is not None:
            assert launch._packed[10]._obj.function == launch._packed[2][0].value


@needs_gpu
def test_a_context_starts_nvrtc_once_before_the_first_build():
    """The first NVRTC compile of a process pays NVRTC's start-up (0.1-0.2 s more than a
    later one on the GPU machine): a context on the GPU runs it on a thread of its own, once
    per process, while the front end makes its one-time tables, and returns when both are
    done."""
    from ppcl.compiler import frontend
    from ppcl.devices.cuda import nvrtc

    device = next(d for p in cl.get_platforms() for d in p.get_devices()
                  if d.type & cl.device_type.GPU)
    cl.Context([device])
    first = nvrtc._warm_up
    assert first is not None and first.name == "ppcl-nvrtc-warm-up"
    assert not first.is_alive() and frontend._PREPARED
    cl.Context([device])
    assert nvrtc._warm_up is first
    program = cl.Program(cl.Context([device]), "__kernel void k(__global int *x) { x[0] = 1; }")
    program.build()


@needs_gpu
def test_a_program_built_again_loads_its_optimized_module_at_once(gctx, gqueue, private_cache):
    """The second build of a program finds its optimized cubin in the cache: no quick tier,
    no thread, and its launches run the optimized module from the first one."""
    from ppcl.compiler.frontend import parse_build_options
    from ppcl.devices.cuda.device import quick_options

    source = """__kernel void axpy(__global const float *x, __global float *y, float a) {
        size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }"""
    first = cl.Program(gctx, source).build()._device_program(gctx.devices[0])
    assert first.quick == (quick_options(parse_build_options("")) is not None)
    _optimized_builds_done()
    assert first.optimized_ready, first.optimized_error
    program = cl.Program(gctx, source).build()
    again = program._device_program(gctx.devices[0])
    assert again.optimized_ready and again.settled and again.cached and not again.quick
    x = np.arange(64, dtype=np.float32)
    xb = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=np.ones_like(x))
    program.axpy(gqueue, x.shape, None, xb, yb, np.float32(2))
    got = np.empty_like(x)
    cl.enqueue_copy(gqueue, got, yb)
    np.testing.assert_array_equal(got, 2 * x + 1)
    (launch,) = again._launches.values()
    assert launch._packed[2][0].value == again.optimized_function("axpy", noalias=True)


FAULT_CHILD = """
import numpy as np, ppcl as cl
from ppcl.devices.cuda import device
if {python_way}:
    device.native_launch = lambda: None
ctx = cl.Context([cl.get_platforms()[1].get_devices()[0]])
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, "__kernel void poke(__global int *x, long far) "
                      "{{ x[get_global_id(0) * far] = 1; }}").build()
x = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1024)
prg.poke(queue, (64,), None, x, np.int64(0))
queue.finish()
print("ran once")
try:
    prg.poke(queue, (64,), None, x, np.int64(1 << 40))
    queue.finish()
except Exception as error:
    print("reported:", type(error).__name__, error)
"""


@needs_gpu
@pytest.mark.parametrize("python_way", [False, True])
def test_a_launch_and_its_wait_report_a_kernel_fault_either_way(python_way):
    """A launch and its wait are one native call where a C compiler built ``launch.c``, two
    driver calls from Python otherwise; a kernel's fault is reported by name either way (in a
    child process: a fault ends the GPU's context for the process)."""
    done = subprocess.run([sys.executable, "-c", FAULT_CHILD.format(python_way=python_way)],
                          capture_output=True, text=True, env=child_env(), timeout=300)
    assert "ran once" in done.stdout, done.stderr
    assert "CL_OUT_OF_RESOURCES" in done.stdout, done.stdout + done.stderr
    assert "'poke' faulted on the GPU: illegal address" in done.stdout, done.stdout


@needs_gpu
def test_launches_take_the_native_launch_and_wait_where_it_was_built(gctx, gqueue,
                                                                     monkeypatch):
    """The same launches, with arguments changing between them, give the same results through
    the native launch-and-wait call and through the two driver calls made from Python."""
    from ppcl.devices.cuda import device

    source = "__kernel void add(__global float *y, float a) { y[get_global_id(0)] += a; }"
    built = device.native_launch()
    assert built is not None  # this machine has a C compiler
    results = []
    for native in (built, None):
        monkeypatch.setattr(device, "native_launch", lambda native=native: native)
        program = _build(gctx, source)
        y = np.zeros(1000, dtype=np.float32)
        buffers = [cl.Buffer(gctx, mf.COPY_HOST_PTR, hostbuf=y) for _ in range(2)]
        for step in range(6):
            program.add(gqueue, y.shape, None, buffers[step % 2], np.float32(step))
        launches = program._device_program(gctx.devices[0])._launches
        assert all((launch._packed[9] is None) == (native is None)
                   for launch in launches.values())
        got = [np.empty_like(y) for _ in buffers]
        for out, buf in zip(got, buffers):
            cl.enqueue_copy(gqueue, out, buf)
        results.append(got)
    np.testing.assert_array_equal(results[0][0], np.full(1000, 0 + 2 + 4, np.float32))
    np.testing.assert_array_equal(results[0][1], np.full(1000, 1 + 3 + 5, np.float32))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
