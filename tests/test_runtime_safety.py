"""Misuse a caller could turn into memory corruption: released memory objects and NDRanges
outside the specification's limits must raise, and released memory must not be handed out
again while an enqueued command still uses it."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.runtime.errors import ERROR_CODES

mf = cl.mem_flags
OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE

SOURCE = """
__kernel void copy(__global const int *src, __global int *dst)
{
    size_t i = get_global_id(0);
    dst[i] = src[i] + 1;
}
"""

N = 256


@pytest.fixture(scope="module")
def program(ctx):
    return cl.Program(ctx, SOURCE).build()


def _code(name: str) -> int:
    return ERROR_CODES[name]


def _buffer(ctx, values=None):
    if values is None:
        return cl.Buffer(ctx, mf.READ_WRITE, N * 4)
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=values)


def _read(queue, buf):
    out = np.empty(N, np.int32)
    cl.enqueue_copy(queue, out, buf)
    return out


def _raises_released(call):
    with pytest.raises(cl.LogicError) as info:
        call()
    assert info.value.code == _code("INVALID_MEM_OBJECT")
    assert "released" in str(info.value)


# ---------------------------------------------------------------------- released memory


def test_every_use_of_a_released_buffer_raises(ctx, queue, program):
    buf = _buffer(ctx)
    other = _buffer(ctx)
    host = np.zeros(N, np.int32)
    buf.release()
    kernel = cl.Kernel(program, "copy")
    _raises_released(lambda: kernel.set_arg(0, buf))
    _raises_released(lambda: program.copy(queue, (N,), None, buf, other))
    _raises_released(lambda: cl.enqueue_copy(queue, host, buf))
    _raises_released(lambda: cl.enqueue_copy(queue, buf, host))
    _raises_released(lambda: cl.enqueue_copy(queue, other, buf))
    _raises_released(lambda: cl.enqueue_copy(queue, buf, other))
    _raises_released(lambda: cl.enqueue_copy(queue, host, buf, buffer_origin=(0, 0, 0),
                                             host_origin=(0, 0, 0), region=(16, 1, 1)))
    _raises_released(lambda: cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, 16))
    _raises_released(lambda: cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ, 0, (N,),
                                                   np.int32))
    _raises_released(lambda: buf.get_info(cl.mem_info.SIZE))
    _raises_released(lambda: buf.get_sub_region(0, 64))
    _raises_released(lambda: buf[0:64])
    assert buf.get_info(cl.mem_info.REFERENCE_COUNT) == 0
    buf.release()  # a second release changes nothing


def test_released_sub_buffer_raises_and_parent_memory_stays(ctx, queue):
    values = np.arange(N, dtype=np.int32)
    parent = _buffer(ctx, values)
    sub = parent.get_sub_region(0, N * 2)
    sub_address = sub.address
    parent.release()  # the sub-buffer keeps the parent's bytes (OpenCL)
    _raises_released(lambda: cl.enqueue_copy(queue, np.zeros(N, np.int32), parent))
    newcomer = _buffer(ctx, np.full(N, -7, np.int32))
    assert not newcomer.address <= sub_address < newcomer.address + newcomer.size
    half = np.empty(N // 2, np.int32)
    cl.enqueue_copy(queue, half, sub)
    np.testing.assert_array_equal(half, values[:N // 2])
    sub.release()
    _raises_released(lambda: cl.enqueue_copy(queue, half, sub))
    np.testing.assert_array_equal(_read(queue, newcomer), -7)


def test_kernel_whose_argument_was_released_does_not_launch(ctx, queue, program):
    src = _buffer(ctx, np.arange(N, dtype=np.int32))
    dst = _buffer(ctx)
    kernel = program.copy
    kernel(queue, (N,), None, src, dst).wait()
    src.release()
    newcomer = _buffer(ctx, np.full(N, 5, np.int32))
    # the same argument objects as the last call: the released one is still caught
    _raises_released(lambda: kernel(queue, (N,), None, src, dst))
    kernel.set_args(dst, newcomer)
    newcomer.release()
    _raises_released(lambda: cl.enqueue_nd_range_kernel(queue, kernel, (N,), None))


@pytest.mark.parametrize("properties", [OUT_OF_ORDER, 0], ids=["out-of-order", "in-order"])
@pytest.mark.parametrize("released", ["source", "destination"])
def test_release_while_a_command_waits_does_not_free_the_memory(ctx, program, released,
                                                                properties):
    queue = cl.CommandQueue(ctx, properties=properties)
    sizes_live = _buffer(ctx, np.arange(N, dtype=np.int32))
    src = _buffer(ctx, np.arange(N, dtype=np.int32) * 10)
    dst = _buffer(ctx, np.zeros(N, np.int32))
    gate = cl.UserEvent(ctx)
    event = program.copy(queue, (N,), None, src, dst, wait_for=[gate])
    doomed = src if released == "source" else dst
    doomed_address = doomed.address
    device = ctx.devices[0].backend
    in_use = device.bytes_in_use()
    assert in_use is not None  # every ppcl device counts its allocations
    doomed.release()
    assert device.bytes_in_use() == in_use  # still held by the pending command
    assert not event.is_done
    # new buffers of the same size must not get the memory the pending command still uses
    newcomers = [_buffer(ctx, np.full(N, -1, np.int32)) for _ in range(4)]
    for newcomer in newcomers:
        assert newcomer.address != doomed_address
    held = device.bytes_in_use()
    gate.set_status(cl.command_execution_status.COMPLETE)
    event.wait()
    for newcomer in newcomers:
        np.testing.assert_array_equal(_read(queue, newcomer), -1)  # nothing overwritten
    if released == "source":
        np.testing.assert_array_equal(_read(queue, dst), np.arange(N) * 10 + 1)
    else:
        np.testing.assert_array_equal(_read(queue, src), np.arange(N) * 10)
    np.testing.assert_array_equal(_read(queue, sizes_live), np.arange(N))
    # once the command completed, the memory goes back to the allocator
    assert device.bytes_in_use() < held  # freed at completion


def test_release_while_a_transfer_waits_does_not_free_the_memory(ctx):
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)
    buf = _buffer(ctx, np.arange(N, dtype=np.int32))
    address = buf.address
    out = np.zeros(N, np.int32)
    gate = cl.UserEvent(ctx)
    event = cl.enqueue_copy(queue, out, buf, wait_for=[gate], is_blocking=False)
    buf.release()
    newcomer = _buffer(ctx, np.full(N, 3, np.int32))
    assert newcomer.address != address
    gate.set_status(cl.command_execution_status.COMPLETE)
    event.wait()
    np.testing.assert_array_equal(out, np.arange(N))


def test_memory_of_a_command_whose_wait_list_failed_is_freed(ctx, program):
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)
    device = ctx.devices[0].backend
    src = _buffer(ctx)
    dst = _buffer(ctx)
    gate = cl.UserEvent(ctx)
    event = program.copy(queue, (N,), None, src, dst, wait_for=[gate])
    src.release()
    dst.release()
    held = device.bytes_in_use()
    gate.set_status(_code("INVALID_VALUE"))
    with pytest.raises(cl.Error):
        event.wait()
    assert device.bytes_in_use() < held


# ---------------------------------------------------------------------- NDRange limits


def _launch_error(queue, program, global_size, local_size=None, offset=None, *,
                  g_times_l=False):
    src = _buffer(ctx=queue.context)
    dst = _buffer(ctx=queue.context)
    with pytest.raises(cl.LogicError) as info:
        program.copy(queue, global_size, local_size, src, dst, global_offset=offset,
                     g_times_l=g_times_l)
    return info.value


@pytest.mark.parametrize(("global_size", "local_size", "offset", "code", "words"), [
    ((2 ** 64,), None, None, "INVALID_GLOBAL_WORK_SIZE", "entry 0 is 18446744073709551616"),
    ((64, 2 ** 64 + 64), None, None, "INVALID_GLOBAL_WORK_SIZE", "entry 1"),
    ((-64,), None, None, "INVALID_GLOBAL_WORK_SIZE", "entry 0 is -64"),
    ((64,), None, (-1,), "INVALID_GLOBAL_OFFSET", "entry 0 is -1, which is negative"),
    ((64, 64), None, (0, -64), "INVALID_GLOBAL_OFFSET", "entry 1 is -64"),
    ((64,), None, (2 ** 64 - 64,), "INVALID_GLOBAL_OFFSET", "exceeds"),
    ((2 ** 63,), None, (2 ** 63,), "INVALID_GLOBAL_OFFSET", "exceeds"),
    ((64.0,), None, None, "INVALID_VALUE", "entry 0 of the global size"),
    ((64, None), None, None, "INVALID_VALUE", "entry 1 of the global size is None"),
    (64.5, None, None, "INVALID_VALUE", "neither an integer"),
    (("64",), None, None, "INVALID_VALUE", "not an integer"),
    ((True,), None, None, "INVALID_VALUE", "not an integer"),
    ((64,), (32.0,), None, "INVALID_VALUE", "entry 0 of the local size"),
    ((64,), None, (0.5,), "INVALID_VALUE", "entry 0 of the global offset"),
    ((64,), None, (None,), "INVALID_VALUE", "entry 0 of the global offset is None"),
])
def test_ndrange_outside_the_limits_raises(queue, program, global_size, local_size, offset,
                                           code, words):
    error = _launch_error(queue, program, global_size, local_size, offset)
    assert error.code == _code(code)
    assert words in str(error)


def test_g_times_l_product_is_checked(queue, program):
    error = _launch_error(queue, program, (2 ** 62,), (64,), g_times_l=True)
    assert error.code == _code("INVALID_GLOBAL_WORK_SIZE")


def test_ndrange_at_the_limits_still_launches(ctx, queue, program):
    src = _buffer(ctx, np.arange(N, dtype=np.int32))
    dst = _buffer(ctx)
    program.copy(queue, (N,), (64,), src, dst, global_offset=(0,)).wait()
    np.testing.assert_array_equal(_read(queue, dst), np.arange(N) + 1)
    program.copy(queue, np.int64(N), None, src, dst, global_offset=[np.int32(0)]).wait()


def test_memory_pool_lends_a_block_again_only_after_its_commands_ran() -> None:
    from ppcl.tools import ImmediateAllocator, MemoryPool

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(
        ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    pool = MemoryPool(ImmediateAllocator(queue))
    lent = pool.allocate(4096)
    gate = cl.UserEvent(ctx)
    cl.enqueue_fill_buffer(queue, lent, np.float32(2), 0, 4096, wait_for=[gate])
    address = lent.address
    lent.release()
    with pytest.raises(cl.Error, match="INVALID_MEM_OBJECT"):
        cl.enqueue_fill_buffer(queue, lent, np.float32(1), 0, 4096)
    meanwhile = pool.allocate(4096)
    assert meanwhile.address != address  # the block is still in use by the pending fill
    gate.set_status(cl.command_execution_status.COMPLETE)
    queue.finish()
    again = pool.allocate(4096)
    assert again.address == address
    out = np.empty(1024, np.float32)
    cl.enqueue_copy(queue, out, again)
    np.testing.assert_array_equal(out, 2)
