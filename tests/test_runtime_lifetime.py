"""Resource lifetime as a long-running program sees it: what the program deletes is freed
(a kernel keeps no reference to its arguments, as OpenCL's clSetKernelArg), while a command
still pending keeps what it uses."""

from __future__ import annotations

import gc
import os
import weakref

import numpy as np
import pytest

import ppcl as cl
import ppcl.array as cla
from ppcl.runtime.errors import ERROR_CODES

mf = cl.mem_flags
OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE

SOURCE = """
__kernel void add_one(__global const int *src, __global int *dst)
{
    size_t i = get_global_id(0);
    dst[i] = src[i] + 1;
}

__kernel void read_image(__read_only image2d_t image, __global float *out)
{
    int2 at = (int2)(get_global_id(0), 0);
    out[get_global_id(0)] = read_imagef(image, at).x;
}
"""

N = 256


@pytest.fixture(scope="module")
def program(ctx):
    return cl.Program(ctx, SOURCE).build()


def _buffer(ctx, values):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.asarray(values, np.int32))


def _read(queue, buf):
    out = np.empty(N, np.int32)
    cl.enqueue_copy(queue, out, buf)
    return out


def _launch_by_call(queue, kernel, src, dst):
    kernel(queue, (N,), None, src, dst)


def _launch_by_set_args(queue, kernel, src, dst):
    kernel.set_args(src, dst)
    cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)


def _launch_by_set_arg(queue, kernel, src, dst):
    kernel.set_arg(0, src)
    kernel.set_arg(1, dst)
    cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)


@pytest.mark.parametrize("launch", [_launch_by_call, _launch_by_set_args, _launch_by_set_arg],
                         ids=["call", "set_args", "set_arg"])
@pytest.mark.parametrize("properties", [0, OUT_OF_ORDER], ids=["in-order", "out-of-order"])
def test_buffers_deleted_after_a_launch_are_freed(ctx, program, launch, properties):
    queue = cl.CommandQueue(ctx, properties=properties)
    device = ctx.devices[0].backend
    kernel = cl.Kernel(program, "add_one")
    gc.collect()  # garbage of earlier tests is freed before the count
    before = device.bytes_in_use()
    src = _buffer(ctx, np.arange(N))
    dst = _buffer(ctx, np.zeros(N))
    launch(queue, kernel, src, dst)
    queue.finish()
    np.testing.assert_array_equal(_read(queue, dst), np.arange(N) + 1)
    refs = weakref.ref(src), weakref.ref(dst)
    del src, dst
    gc.collect()
    assert [ref() for ref in refs] == [None, None]  # neither the kernel nor the device keeps them
    assert device.bytes_in_use() <= before


def test_a_pending_launch_keeps_its_deleted_arguments(ctx, program):
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)
    src = _buffer(ctx, np.arange(N) * 10)
    dst = _buffer(ctx, np.zeros(N))
    gate = cl.UserEvent(ctx)
    kernel = program.add_one
    kernel(queue, (N,), None, src, dst, wait_for=[gate])
    src_address, ref = src.address, weakref.ref(src)
    del src
    gc.collect()
    assert ref() is not None  # the command holds it until it has run
    newcomers = [_buffer(ctx, np.full(N, -1)) for _ in range(4)]
    assert src_address not in [newcomer.address for newcomer in newcomers]
    gate.set_status(cl.command_execution_status.COMPLETE)
    queue.finish()
    np.testing.assert_array_equal(_read(queue, dst), np.arange(N) * 10 + 1)
    for newcomer in newcomers:
        np.testing.assert_array_equal(_read(queue, newcomer), -1)
    gc.collect()
    assert ref() is None


def _loaded_kernel_objects() -> set[str]:
    """The compiled kernels (shared objects of ppcl's cache) mapped into this process."""
    with open("/proc/self/maps") as maps:
        return {line.split()[-1] for line in maps if line.rstrip().endswith(".so")
                and "/objects/" in line}


@pytest.mark.cpu_device  # the CPU device's shared objects; a GPU loads modules instead
@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_a_dropped_program_unloads_its_library_after_its_last_launch(ctx, program):
    # every program of its own source kept its shared object loaded for the life of the
    # process; now it goes once the program, its kernels and their launches are gone
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)
    src = _buffer(ctx, np.arange(N))
    program.add_one(queue, (N,), None, src, _buffer(ctx, np.zeros(N))).wait()  # the
    # device's own runtime is loaded
    before = _loaded_kernel_objects()
    gate = cl.UserEvent(ctx)
    steps = (1007, 2007, 3007)
    outs = [_buffer(ctx, np.zeros(N)) for _ in steps]
    dropped = []
    for step, out in zip(steps, outs):
        kernel = cl.Program(ctx, SOURCE.replace("+ 1;", f"+ {step};")).build().add_one
        kernel(queue, (N,), None, src, out, wait_for=[gate])
        dropped.append(weakref.ref(kernel.program))
        del kernel
    gc.collect()
    loaded = _loaded_kernel_objects() - before
    assert len(loaded) == 3  # the launches waiting on the gate keep theirs
    gate.set_status(cl.command_execution_status.COMPLETE)
    queue.finish()
    for step, out in zip(steps, outs):
        np.testing.assert_array_equal(_read(queue, out), np.arange(N) + step)
    gc.collect()
    assert [ref() for ref in dropped] == [None, None, None]
    assert not loaded & _loaded_kernel_objects()


def test_a_launch_whose_argument_was_deleted_raises(ctx, queue, program):
    kernel = cl.Kernel(program, "add_one")
    src = _buffer(ctx, np.arange(N))
    dst = _buffer(ctx, np.zeros(N))
    kernel.set_args(src, dst)
    del src
    gc.collect()
    with pytest.raises(cl.LogicError) as info:
        cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)
    assert info.value.code == ERROR_CODES["INVALID_MEM_OBJECT"]
    assert "argument 0 ('src'" in str(info.value) and "was deleted" in str(info.value)
    kernel.set_arg(0, _buffer(ctx, np.arange(N)))  # set again, the kernel launches
    with pytest.raises(cl.LogicError, match="was deleted"):  # (a temporary: gone at once)
        cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)
    keep = _buffer(ctx, np.arange(N))
    kernel.set_arg(0, keep)
    cl.enqueue_nd_range_kernel(queue, kernel, (N,), None)
    np.testing.assert_array_equal(_read(queue, dst), np.arange(N) + 1)


def test_a_new_buffer_each_call_is_taken_each_time(ctx, queue, program):
    """A buffer made for each call may reuse a deleted one's address and object id: each
    call still launches with the buffer it names."""
    kernel = program.add_one
    dst = _buffer(ctx, np.zeros(N))
    for step in range(20):
        kernel(queue, (N,), None, _buffer(ctx, np.full(N, step)), dst)
        np.testing.assert_array_equal(_read(queue, dst), step + 1)


def test_an_image_deleted_after_a_launch_is_freed(ctx, queue, program):
    image_format = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    image = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, image_format, shape=(N, 1),
                     hostbuf=np.arange(N, dtype=np.float32))
    out = cl.Buffer(ctx, mf.WRITE_ONLY, N * 4)
    program.read_image(queue, (N,), None, image, out)
    result = np.empty(N, np.float32)
    cl.enqueue_copy(queue, result, out)
    np.testing.assert_array_equal(result, np.arange(N))
    ref = weakref.ref(image)
    del image
    gc.collect()
    assert ref() is None


def test_a_command_thread_keeps_nothing_of_the_command_it_ran(ctx):
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)  # commands run on command threads
    buf = _buffer(ctx, np.arange(N))
    host = np.empty(N, np.int32)
    cl.enqueue_copy(queue, host, buf, is_blocking=False)
    queue.finish()
    np.testing.assert_array_equal(host, np.arange(N))
    refs = weakref.ref(buf), weakref.ref(host)
    del buf, host
    gc.collect()
    assert [ref() for ref in refs] == [None, None]


@pytest.mark.parametrize("kind", ["buffer", "image"])
def test_a_mapped_array_dropped_without_unmapping_unmaps(ctx, queue, kind):
    """As in PyOpenCL: the region is unmapped, and the memory object's bytes are freed with
    it (they stayed held, mapped, for good)."""
    device = ctx.devices[0].backend
    gc.collect()  # garbage of earlier tests is freed before the count
    before = device.bytes_in_use()
    if kind == "buffer":
        mem = cl.Buffer(ctx, mf.READ_WRITE, N * 4)
        mapped, _ = cl.enqueue_map_buffer(queue, mem, cl.map_flags.WRITE, 0, (N,), np.int32)
    else:
        image_format = cl.ImageFormat(cl.channel_order.R, cl.channel_type.SIGNED_INT32)
        mem = cl.Image(ctx, mf.READ_WRITE, image_format, shape=(N, 1))
        mapped, _, _, _ = cl.enqueue_map_image(queue, mem, cl.map_flags.WRITE, (0, 0), (N, 1),
                                               (1, N), np.int32)
    mapped[...] = 7
    assert mem.get_info(cl.mem_info.MAP_COUNT) == 1
    del mapped
    gc.collect()
    assert mem.get_info(cl.mem_info.MAP_COUNT) == 0
    out = np.empty(N, np.int32)
    if kind == "buffer":
        cl.enqueue_copy(queue, out, mem)
    else:
        cl.enqueue_copy(queue, out.reshape(1, N), mem, origin=(0, 0), region=(N, 1))
    np.testing.assert_array_equal(out, 7)
    del mem
    gc.collect()
    assert device.bytes_in_use() <= before


ARRAY_EXPRESSIONS = {
    "fill": lambda q: cla.empty(q, (N,), np.float32).fill(3),
    "zeros": lambda q: cla.zeros(q, (N,), np.float32),
    "arange": lambda q: cla.arange(q, 0, N, 1, dtype=np.float32),
    "sum of a product": lambda q: (cla.zeros(q, (N,), np.float32) * 2 + 1).sum(),
}


@pytest.mark.parametrize("make", ARRAY_EXPRESSIONS.values(), ids=ARRAY_EXPRESSIONS.keys())
def test_array_temporaries_are_freed_without_the_garbage_collector(ctx, queue, make):
    """An array dropped is freed at once: no reference cycle keeps its buffer until the
    garbage collector runs (a loop of large temporaries would pile them up)."""
    device = ctx.devices[0].backend
    make(queue).get()  # the kernels are built
    gc.collect()  # garbage of earlier tests is freed before the count
    before = device.bytes_in_use()
    gc.disable()
    try:
        for _ in range(3):
            make(queue).get()
        queue.finish()
        assert device.bytes_in_use() <= before
    finally:
        gc.enable()
