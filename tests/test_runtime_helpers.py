"""The PyOpenCL helper modules: cltypes, characterize, tools (fixtures, allocators, pool) and
the clinfo-like device listing."""

from __future__ import annotations

import io
import subprocess
import sys
import typing

import numpy as np
import pytest

import ppcl as cl
from ppcl import characterize, cltypes, tools
from ppcl.runtime.info import print_info
from ppcl.tools import pytest_generate_tests_for_pyopencl as pytest_generate_tests  # noqa: F401
from tests.child_env import child_env


def test_ctx_factory_fixture_covers_ppcl_devices(ctx_factory):
    ctx = ctx_factory()
    assert isinstance(ctx, cl.Context)
    assert ctx.devices == [ctx_factory.device]
    assert ctx.devices[0].platform.name.startswith("ppcl")  # ppcl's own or its CUDA platform


def test_ctx_factory_type_is_exported():
    """Test suites annotate the fixture as ``cl.CtxFactory``, evaluated when their module loads
    unless it defers annotations."""
    def annotated(ctx_factory: cl.CtxFactory) -> cl.Context:
        return ctx_factory()

    assert typing.get_type_hints(annotated)["ctx_factory"] == cl.CtxFactory
    assert "CtxFactory" in cl.__all__


def test_device_fixture(device, platform):
    assert device in platform.get_devices()


def test_test_platform_selection(monkeypatch):
    monkeypatch.setenv("PYOPENCL_TEST", "0:0")
    monkeypatch.delenv("PPCL_TEST", raising=False)
    [(platform, devices)] = tools.get_test_platforms_and_devices()
    assert platform.name == "ppcl" and len(devices) == 1
    assert tools.get_test_platforms_and_devices("ppcl")[0][1] == devices
    with pytest.raises(RuntimeError):
        tools.get_test_platforms_and_devices("5")


def test_cltypes_vectors():
    assert cltypes.float4.itemsize == 16
    assert cltypes.float3.itemsize == 16  # padded like OpenCL C
    assert cltypes.double16.itemsize == 128
    v = cltypes.make_float3(1, 2, 3)
    assert (v["x"], v["y"], v["z"]) == (1, 2, 3)
    assert v["s2"] == 3
    assert cltypes.zeros_int4()["w"] == 0
    assert cltypes.ones_uchar2()["y"] == 1
    assert cltypes.filled_short8(7)["s7"] == 7
    assert cltypes.vec_types[np.dtype(np.float32), 4] == cltypes.float4
    assert cltypes.vec_type_to_scalar_and_count[cltypes.int2] == (np.dtype(np.int32), 2)
    assert cltypes.uint is np.uint32 and cltypes.double is np.float64
    with pytest.raises(TypeError):
        cltypes.make_float4(1, 2)


def test_cltypes_and_tools_come_with_the_package():
    # as ``import pyopencl as cl``, ``import ppcl as cl`` alone gives cl.cltypes and cl.tools
    # (programs call cl.cltypes.make_float4 without importing the submodule); a fresh process,
    # as this one imported both already
    code = ("import ppcl as cl; v = cl.cltypes.make_float4(1, 2, 3, 4); "
            "print(v['w'], cl.tools.dtype_to_ctype(cl.cltypes.float4))")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["4.0", "float4"]


def test_cltypes_values_are_writable_and_pass_as_arguments(ctx_factory):
    # as PyOpenCL's, a made vector is a writable 0-d array: a host destination for
    # enqueue_copy (it was a read-only numpy scalar: CL_INVALID_HOST_PTR) and a kernel argument
    ctx = ctx_factory()
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "kernel void k(global float4 *o, float4 v) { *o = v * 2; }").build()
    value = cltypes.make_float4(1, 2, 3, 4)
    assert value.shape == () and value.flags.writeable
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, size=value.nbytes)
    prg.k(queue, (1,), None, buf, value)
    out = cltypes.zeros_float4()
    cl.enqueue_copy(queue, out, buf)
    assert out.item() == (2, 4, 6, 8)


def test_array_vec_is_the_old_name_of_cltypes(ctx_factory):
    # programs written for older PyOpenCL read back an int4 through ``cl.array.vec``
    import ppcl.array
    ctx = ctx_factory()
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "kernel void k(global int4 *o) { *o = (int4)(1, 2, 3, 4); }").build()
    with pytest.warns(DeprecationWarning, match="cltypes"):
        out = cl.array.vec.zeros_int4()
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, size=out.itemsize)
    prg.k(queue, (1,), None, buf)
    cl.enqueue_copy(queue, out, buf)
    assert out.item() == (1, 2, 3, 4)
    with pytest.warns(DeprecationWarning):
        assert ppcl.array.vec.char16 == cltypes.char16
        assert ppcl.array.vec.types is cltypes.vec_types


def test_characterize_answers():
    dev = cl.get_platforms()[0].get_devices()[0]
    assert characterize.has_double_support(dev)
    assert characterize.get_pocl_version(dev.platform) is None
    assert characterize.has_struct_arg_count_bug(dev) is False
    gpu = dev.type & cl.device_type.GPU
    assert characterize.get_simd_group_size(dev, 4) == (characterize.NVIDIA_WARP if gpu else 1)
    assert characterize.usable_local_mem_size(dev) == dev.local_mem_size
    assert characterize.reasonable_work_group_size_multiple(dev) >= 1
    assert characterize.nv_compute_capability(dev) is None
    assert "-cl-fast-relaxed-math" in characterize.get_fast_inaccurate_build_options(dev)
    assert characterize.has_coarse_grain_buffer_svm(dev) is False


def test_characterize_performance_measures_the_device(ctx_factory):
    # PyOpenCL's dump-performance example imports this module and prints these figures
    import ppcl.characterize.performance as perf
    ctx = ctx_factory()
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    assert 0 < perf.transfer_latency(queue, perf.DeviceToDeviceTransfer) < 1  # wall clock
    events = []

    class OneRoundTimer(perf.WallTimer):
        """Stretches the time so that one round of calls is enough (keeps the test short)."""

        def add_event(self, event):
            events.append(event)

        def get_elapsed(self):
            return 1e6 * super().get_elapsed()

    fast = {"timer_factory": OneRoundTimer}
    overhead, latency = perf.get_profiling_overhead(ctx, **fast)
    assert latency > 0 and overhead < latency
    assert perf.get_empty_kernel_time(queue, **fast) > 0
    for transfer in (perf.HostToDeviceTransfer, perf.DeviceToHostTransfer,
                     perf.DeviceToDeviceTransfer):
        assert perf.transfer_bandwidth(queue, transfer, 1 << 16, **fast) > 0
    assert perf.get_add_rate(queue, **fast) > 0
    assert events and all(isinstance(e, cl.Event) for e in events if e is not None)


def test_allocators_and_memory_pool():
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    assert tools.DeferredAllocator(ctx)(100).size == 100
    pool = tools.MemoryPool(tools.ImmediateAllocator(queue))
    first = pool.allocate(1000)
    assert first.size == 1000 and pool.active_blocks == 1
    address = first.address
    cl.enqueue_copy(queue, first, np.arange(250, dtype=np.int32))
    first.release()
    assert pool.held_blocks == 1 and pool.active_blocks == 0
    again = pool(1000)
    assert again.address == address  # reused
    assert pool.held_blocks == 0
    out = np.empty(250, np.int32)
    cl.enqueue_copy(queue, out, again)
    np.testing.assert_array_equal(out, np.arange(250))
    del again  # garbage collection returns the block too
    assert pool.held_blocks == 1
    pool.free_held()
    assert pool.held_blocks == 0 and pool.managed_bytes == 0
    assert pool.bin_size(1000) == 1024 and pool.bin_size(16) == 16


def test_allocators_answer_none_for_no_bytes():
    """As PyOpenCL's: an allocator asked for 0 bytes returns None (it raised
    CL_INVALID_BUFFER_SIZE), which code making empty arrays with its own allocator relies on."""
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    for allocator in (tools.DeferredAllocator(ctx), tools.ImmediateAllocator(queue)):
        assert allocator(0) is None
        assert allocator(15).size == 15
    pool = tools.MemoryPool(lambda size: None)
    with pytest.raises(cl.MemoryError, match="no buffer"):
        pool.allocate(8)


@pytest.mark.parametrize("leading_bits", [1, 4, 7])
def test_memory_pool_bin_numbers_and_their_sizes(leading_bits):
    """PyOpenCL's bin_number(size) and alloc_size(bin): a bin's buffers hold every size it
    serves, and a bin's size falls in that bin."""
    ctx = cl.create_some_context(interactive=False)
    pool = tools.MemoryPool(tools.DeferredAllocator(ctx), leading_bits_in_bin_id=leading_bits)
    rng = np.random.default_rng(leading_bits)
    sizes = [0, 1, 2, 3, 31, 32, 33, 1000, 2**30, 2**31 + 5,
             *(int(s) >> int(r) for s, r in zip(rng.integers(0, 2**31, 500),
                                                 rng.integers(0, 32, 500)))]
    for size in sizes:
        number = pool.bin_number(size)
        held = pool.alloc_size(number)
        assert held >= max(1, size) and held == pool.bin_size(max(1, size))
        assert pool.bin_number(held) == number
    assert pool.bin_number(1000) != pool.bin_number(2000)


def test_memoize_and_clear():
    calls: list[int] = []

    @tools.first_arg_dependent_memoize
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    assert square(3) == 9 and square(3) == 9 and calls == [3]
    tools.clear_first_arg_caches()
    square(3)
    assert calls == [3, 3]


def test_print_info_lists_the_device():
    out = io.StringIO()
    print_info(out)
    text = out.getvalue()
    dev = cl.get_platforms()[0].get_devices()[0]
    assert "Platform Name" in text and "ppcl" in text
    assert dev.name in text
    assert "Max work group size" in text and str(dev.max_work_group_size) in text
    assert "cl_khr_fp64" in text
