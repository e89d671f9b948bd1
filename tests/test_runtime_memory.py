"""Buffers, sub-buffers, copies (linear and rectangular), fills, maps and the allocator."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.host_memory import ALIGNMENT, BufferAllocator

mf = cl.mem_flags


def test_copy_host_ptr_and_read_back(ctx, queue):
    a = np.arange(1000, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    assert buf.size == a.nbytes
    assert buf.address % ALIGNMENT == 0
    out = np.empty_like(a)
    event = cl.enqueue_copy(queue, out, buf)
    assert event.command_execution_status == cl.command_execution_status.COMPLETE
    np.testing.assert_array_equal(out, a)
    a[:] = -1  # COPY_HOST_PTR took a copy
    cl.enqueue_copy(queue, out, buf)
    assert out[5] == 5


def test_use_host_ptr_is_zero_copy(ctx, queue):
    a = np.zeros(64, dtype=np.int32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=a)
    cl.enqueue_copy(queue, buf, np.arange(64, dtype=np.int32))
    np.testing.assert_array_equal(a, np.arange(64))
    assert buf.get_host_array(64, np.int32).ctypes.data == a.ctypes.data
    assert buf.get_info(cl.mem_info.HOST_PTR) is a


def test_alloc_host_ptr_and_write_then_read(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 256)
    data = np.arange(64, dtype=np.uint32)
    cl.enqueue_copy(queue, buf, data, is_blocking=False).wait()
    out = np.empty(32, dtype=np.uint32)
    cl.enqueue_copy(queue, out, buf, device_offset=128)
    np.testing.assert_array_equal(out, data[32:])


@pytest.mark.parametrize("flags, kwargs", [
    (mf.READ_WRITE, {}),  # no size
    (mf.READ_WRITE | mf.READ_ONLY, {"size": 4}),
    (mf.USE_HOST_PTR | mf.COPY_HOST_PTR, {"hostbuf": np.zeros(4)}),
    (mf.READ_WRITE, {"hostbuf": np.zeros(4)}),
    (mf.COPY_HOST_PTR, {}),
    (mf.COPY_HOST_PTR, {"size": 64, "hostbuf": np.zeros(4)}),
])
def test_invalid_buffer_creation(ctx, flags, kwargs):
    with pytest.raises(cl.LogicError):
        cl.Buffer(ctx, flags, **kwargs)


def test_copies_out_of_bounds_are_invalid_value(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    other = cl.Buffer(ctx, mf.READ_WRITE, 64)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_copy(queue, np.empty(20, np.float32), buf)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_copy(queue, buf, np.empty(4, np.float32), device_offset=60)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_copy(queue, other, buf, byte_count=32, src_offset=48)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_copy(queue, np.empty(4), np.empty(4))


def test_buffer_to_buffer_copy(ctx, queue):
    a = np.arange(256, dtype=np.uint8)
    src = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=a)
    dst = cl.Buffer(ctx, mf.READ_WRITE, 256)
    cl.enqueue_fill_buffer(queue, dst, np.uint8(7), 0, 256)
    cl.enqueue_copy(queue, dst, src, byte_count=100, src_offset=10, dst_offset=20)
    out = np.empty(256, np.uint8)
    cl.enqueue_copy(queue, out, dst)
    np.testing.assert_array_equal(out[20:120], a[10:110])
    assert (out[:20] == 7).all() and (out[120:] == 7).all()
    cl.enqueue_copy(queue, dst, src)
    cl.enqueue_copy(queue, out, dst)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(cl.Error, match="CL_MEM_COPY_OVERLAP"):
        cl.enqueue_copy(queue, src, src, byte_count=16, src_offset=0, dst_offset=8)


def test_fill_buffer_with_patterns(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
    cl.enqueue_fill_buffer(queue, buf, np.float32(2.5), 0, 64)
    out = np.empty(16, np.float32)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 2.5).all()
    cl.enqueue_fill_buffer(queue, buf, np.array([1, 2], np.int32), 8, 16)
    cl.enqueue_copy(queue, out, buf)
    assert list(out.view(np.int32)[2:6]) == [1, 2, 1, 2]
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_fill_buffer(queue, buf, np.float32(0), 2, 8)


def test_rect_write_read_between_host_and_buffer(ctx, queue):
    host = np.arange(8 * 6, dtype=np.float32).reshape(6, 8)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 16 * 10 * 4)
    cl.enqueue_fill_buffer(queue, buf, np.float32(-1), 0, buf.size)
    # copy host[1:4, 2:7] to buffer rows 5..7, columns 3..7 of a 16-float wide image
    cl.enqueue_copy(queue, buf, host, buffer_origin=(3 * 4, 5), host_origin=(2 * 4, 1),
                    region=(5 * 4, 3), buffer_pitches=(16 * 4,), host_pitches=(8 * 4,))
    back = np.empty((10, 16), np.float32)
    cl.enqueue_copy(queue, back, buf)
    np.testing.assert_array_equal(back[5:8, 3:8], host[1:4, 2:7])
    assert (back[:5] == -1).all() and (back[8:] == -1).all() and (back[5:8, :3] == -1).all()
    part = np.zeros((3, 5), np.float32)
    cl.enqueue_copy(queue, part, buf, buffer_origin=(3 * 4, 5, 0), host_origin=(0, 0, 0),
                    region=(5 * 4, 3, 1), buffer_pitches=(16 * 4, 16 * 10 * 4),
                    host_pitches=(5 * 4, 15 * 4))
    np.testing.assert_array_equal(part, host[1:4, 2:7])
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_copy(queue, part, buf, buffer_origin=(0, 9), host_origin=(0, 0),
                        region=(5 * 4, 3), buffer_pitches=(16 * 4,))


def test_rect_copy_between_buffers_3d(ctx, queue):
    volume = np.arange(4 * 5 * 6, dtype=np.int16).reshape(4, 5, 6)
    src = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=volume)
    dst = cl.Buffer(ctx, mf.READ_WRITE, 2 * 3 * 4 * 2)
    cl.enqueue_copy(queue, dst, src, src_origin=(1 * 2, 2, 1), dst_origin=(0, 0, 0),
                    region=(4 * 2, 3, 2), src_pitches=(6 * 2, 5 * 6 * 2))
    out = np.empty((2, 3, 4), np.int16)
    cl.enqueue_copy(queue, out, dst)
    np.testing.assert_array_equal(out, volume[1:3, 2:5, 1:5])


def test_sub_buffers(ctx, queue):
    data = np.arange(1024, dtype=np.uint8)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    sub = buf[128:384]
    assert sub.size == 256 and sub.offset == 128
    out = np.empty(256, np.uint8)
    cl.enqueue_copy(queue, out, sub)
    np.testing.assert_array_equal(out, data[128:384])
    cl.enqueue_copy(queue, sub, np.zeros(256, np.uint8))
    whole = np.empty(1024, np.uint8)
    cl.enqueue_copy(queue, whole, buf)
    assert (whole[128:384] == 0).all() and whole[127] == 127 and whole[384] == 128
    region = buf.get_sub_region(512, 128)
    assert region.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT) is buf
    assert region.get_info(cl.mem_info.OFFSET) == 512
    with pytest.raises(cl.Error, match="MISALIGNED_SUB_BUFFER_OFFSET"):
        buf.get_sub_region(3, 16)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        buf.get_sub_region(896, 256)


def test_map_and_unmap(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 400)
    ary, event = cl.enqueue_map_buffer(queue, buf, cl.map_flags.WRITE, 0, (10, 10), np.float32)
    event.wait()
    assert ary.shape == (10, 10) and ary.dtype == np.float32
    assert isinstance(ary.base, cl.MemoryMap)
    assert buf.get_info(cl.mem_info.MAP_COUNT) == 1
    ary[:] = np.arange(100, dtype=np.float32).reshape(10, 10)
    ary.base.release(queue)
    assert buf.get_info(cl.mem_info.MAP_COUNT) == 0
    out = np.empty(100, np.float32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, np.arange(100))
    ary2, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ, 40, 5, np.float32)
    with ary2.base:
        np.testing.assert_array_equal(ary2, np.arange(10, 15))
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ, 0, 101, np.float32)


def test_local_memory_object():
    assert cl.LocalMemory(64).size == 64
    with pytest.raises(cl.LogicError):
        cl.LocalMemory(0)


def test_allocator_first_fit_greedy_and_merging():
    allocator = BufferAllocator(chunk_size=4096, large_size=2048)
    blocks = [allocator.allocate(100) for _ in range(8)]
    addresses = [b.address for b in blocks]
    assert all(a % ALIGNMENT == 0 for a in addresses)
    # greedy: successive allocations are consecutive 128-byte slots of one chunk
    assert addresses == [addresses[0] + 128 * i for i in range(8)]
    assert allocator.chunk_count == 1
    blocks[2].release()
    blocks[3].release()
    # freed neighbours merged: a 256-byte request fits exactly where they were (first fit,
    # after the greedy slot at the end is also free, so the greedy one wins)
    after = allocator.allocate(256)
    assert after.address == addresses[7] + 128
    first_fit = BufferAllocator(chunk_size=4096, large_size=2048, greedy=False)
    parts = [first_fit.allocate(128) for _ in range(4)]
    parts[1].release()
    parts[2].release()
    assert first_fit.allocate(256).address == parts[1].address
    big = allocator.allocate(3000)  # large: its own block
    assert big.address % ALIGNMENT == 0 and allocator.chunk_count == 1
    # a chunk fills up, another is added
    more = [allocator.allocate(1024) for _ in range(4)]
    assert allocator.chunk_count == 2
    for block in more:
        block.release()
    assert allocator.chunk_count == 1


def test_allocator_keeps_freed_large_blocks_for_reuse(monkeypatch):
    from ppcl.devices import host_memory

    monkeypatch.setattr(host_memory, "KEEP_LARGE", 3 * 8192)
    allocator = BufferAllocator(chunk_size=4096, large_size=2048)
    first = allocator.allocate(5000)  # two pages
    address = first.address
    first.release()
    again = allocator.allocate(4500)  # the same page-rounded size: the freed block again
    assert again.address == address and again.array.size == 4500
    other = allocator.allocate(9000)  # another size: a new block
    assert other.address != address
    blocks = [allocator.allocate(8192) for _ in range(4)]
    kept = [b.address for b in blocks]
    for block in blocks:
        block.release()
    # at most KEEP_LARGE bytes stay: the oldest freed block was given back
    reused = {allocator.allocate(8192).address for _ in range(3)}
    assert reused == set(kept[1:])


def test_buffers_over_reused_blocks_hold_their_own_data(ctx, queue):
    n = 2 * 1024 * 1024  # 8 MiB of float32: large buffers with blocks of their own
    for k in range(3):
        data = np.full(n, k, np.float32)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
        out = np.empty(n, np.float32)
        cl.enqueue_copy(queue, out, buf)
        np.testing.assert_array_equal(out, data)
        buf.release()


@pytest.mark.parametrize("nbytes", [1024 * 1024, 3 * 256 * 1024 + 17, 5 * 1024 * 1024 + 1])
def test_large_copies_shared_by_the_pool_are_exact(nbytes):
    """Copies of 1 MiB or more run as pool launches of 256 KiB blocks (the last one partial)."""
    from ppcl.devices.cpu import CPUDevice
    from ppcl.runtime.platform import Device as RuntimeDevice

    ctx = cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(4))])
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(nbytes)
    data = rng.integers(0, 256, nbytes, dtype=np.uint8)
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_copy(queue, a, data)  # host to buffer
    cl.enqueue_copy(queue, b, a)  # buffer to buffer
    out = np.zeros(nbytes, np.uint8)
    cl.enqueue_copy(queue, out, b)  # buffer to host
    np.testing.assert_array_equal(out, data)
    # a copy between two halves of one buffer
    half = nbytes // 2
    cl.enqueue_copy(queue, a, a, src_offset=0, dst_offset=half, byte_count=nbytes - half - 1)
    cl.enqueue_copy(queue, out, a)
    np.testing.assert_array_equal(out[half:half + nbytes - half - 1], data[:nbytes - half - 1])
    np.testing.assert_array_equal(out[:half], data[:half])


def test_device_copy_of_other_types_converts_as_numpy_does():
    """Only same-shape, same-type contiguous copies go to the pool as bytes; another pair of
    views is numpy's assignment, values converted."""
    from ppcl.devices.cpu import CPUDevice

    device = CPUDevice(4)
    source = np.arange(512 * 1024, dtype=np.int32)  # 2 MiB
    target = np.zeros(512 * 1024, np.float32)
    device.transfer(target, source)
    np.testing.assert_array_equal(target, source.astype(np.float32))
    same = np.empty_like(source)
    device.transfer(same, source)
    np.testing.assert_array_equal(same, source)


def test_sizes_and_offsets_that_are_not_integers_are_refused_and_harm_nothing(ctx, queue):
    # a float size once reached the allocator, whose chunk then held float offsets: every
    # later buffer of the process failed with numpy's "slice indices must be integers"
    for size in (16.0, "16", None):
        with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*buffer size"):
            cl.Buffer(ctx, mf.READ_WRITE, size)
    assert cl.Buffer(ctx, mf.READ_WRITE, np.int64(16)).size == 16
    with pytest.raises(cl.LogicError, match="CL_INVALID_CONTEXT"):
        cl.Buffer(None, mf.READ_WRITE, 16)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.arange(16, dtype=np.uint8))
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*origin"):
        buf.get_sub_region(0.0, 16)
    out = np.zeros(4, np.uint8)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*offset"):
        cl.enqueue_copy(queue, out, buf, src_offset=4.0)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*buffer_origin"):
        cl.enqueue_copy(queue, out, buf, buffer_origin=(0.5, 0), host_origin=(0, 0),
                        region=(2, 2), buffer_pitches=(4,), host_pitches=(2,))
    cl.enqueue_copy(queue, out, buf, src_offset=np.int32(4))
    np.testing.assert_array_equal(out, [4, 5, 6, 7])


def test_sub_buffer_flags_sizes_and_slices_as_opencl_checks_them(ctx, queue):
    buf = cl.Buffer(ctx, mf.WRITE_ONLY | mf.ALLOC_HOST_PTR, 1024)
    with pytest.raises(cl.LogicError, match="CL_INVALID_BUFFER_SIZE"):
        buf.get_sub_region(0, 0)
    for flags in (mf.USE_HOST_PTR, mf.READ_ONLY, mf.READ_WRITE):
        with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
            buf.get_sub_region(0, 128, flags)
    sub = buf.get_sub_region(0, 128)
    assert sub.flags == mf.WRITE_ONLY | mf.ALLOC_HOST_PTR  # inherited, as OpenCL says
    read_only = cl.Buffer(ctx, mf.READ_ONLY, 1024)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        read_only.get_sub_region(0, 128, mf.WRITE_ONLY)
    # PyOpenCL raises LogicError here too (these were TypeError and ValueError)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        buf[3]
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        buf[0:256:2]


def test_host_access_flags_refuse_what_they_forbid(ctx, queue):
    """HOST_READ_ONLY, HOST_WRITE_ONLY and HOST_NO_ACCESS refuse host writes, reads and maps
    with CL_INVALID_OPERATION, as OpenCL 1.2 and PyOpenCL on pocl do, and sub-buffers inherit
    them: they were accepted silently."""
    data = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    read_only = cl.Buffer(ctx, mf.READ_WRITE | mf.HOST_READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    cl.enqueue_copy(queue, out, read_only)
    assert (out == data).all()
    with pytest.raises(cl.LogicError, match="CL_INVALID_OPERATION.*HOST_READ_ONLY"):
        cl.enqueue_copy(queue, read_only, data)
    with pytest.raises(cl.LogicError, match="CL_INVALID_OPERATION"):
        cl.enqueue_map_buffer(queue, read_only, cl.map_flags.WRITE, 0, (4,), np.float32)
    with pytest.raises(cl.LogicError, match="CL_INVALID_OPERATION"):
        cl.enqueue_copy(queue, read_only.get_sub_region(0, 128), data[:32])
    write_only = cl.Buffer(ctx, mf.READ_WRITE | mf.HOST_WRITE_ONLY, 256)
    cl.enqueue_copy(queue, write_only, data)
    for read in (lambda: cl.enqueue_copy(queue, out, write_only),
                 lambda: cl.enqueue_copy(queue, out, write_only, buffer_origin=(0, 0),
                                         host_origin=(0, 0), region=(16, 2)),
                 lambda: cl.enqueue_map_buffer(queue, write_only, cl.map_flags.READ, 0, (4,),
                                               np.float32)):
        with pytest.raises(cl.LogicError, match="CL_INVALID_OPERATION.*HOST_WRITE_ONLY"):
            read()
    hidden = cl.Image(ctx, mf.READ_WRITE | mf.HOST_NO_ACCESS, fmt, shape=(4, 4))
    with pytest.raises(cl.LogicError, match="CL_INVALID_OPERATION.*HOST_NO_ACCESS"):
        cl.enqueue_copy(queue, out, hidden, origin=(0, 0), region=(4, 4))
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*exclude"):
        cl.Buffer(ctx, mf.HOST_READ_ONLY | mf.HOST_NO_ACCESS, 16)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*more host access"):
        write_only.get_sub_region(0, 128, mf.HOST_READ_ONLY)


def test_fill_with_a_pattern_that_is_no_data(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 16)
    for pattern in (None, object(), [None]):
        with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*fill pattern"):
            cl.enqueue_fill_buffer(queue, buf, pattern, 0, 16)


def test_map_buffer_with_strides_of_three_dimensions(ctx, queue):
    """The mapped range runs to the last element over every dimension's stride: it was sized
    by the largest stride alone, so a 3-d C-ordered map (as Array.map_to_host asks) failed."""
    host = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    rw = cl.map_flags.READ | cl.map_flags.WRITE
    mapped, _ = cl.enqueue_map_buffer(queue, buf, rw, 0, host.shape, np.float32,
                                      strides=host.strides)
    np.testing.assert_array_equal(mapped, host)
    mapped[1, 2, 3] = -1
    mapped.base.release(queue)
    out = np.empty_like(host)
    cl.enqueue_copy(queue, out, buf)
    assert out[1, 2, 3] == -1
    # a map of the last element's column past the buffer's end is still refused
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_map_buffer(queue, buf, rw, 4, host.shape, np.float32, strides=host.strides)
    empty, _ = cl.enqueue_map_buffer(queue, buf, rw, 0, (0, 3), np.float32, strides=(12, 4))
    assert empty.shape == (0, 3)
    empty.base.release(queue)


def test_map_copy_and_migrate_arguments_of_the_wrong_type(ctx, queue):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 16)
    read = cl.map_flags.READ
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_map_buffer(queue, buf, read, 0, (4.0,), np.float32)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.enqueue_map_buffer(queue, buf, read, 0, 4.0, np.float32)
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*strides"):
        cl.enqueue_map_buffer(queue, buf, read, 0, (2,), np.float32, strides=(-4,))
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*byte_count"):
        cl.enqueue_copy(queue, buf, cl.Buffer(ctx, mf.READ_WRITE, 16), byte_count="4")
    with pytest.raises(cl.LogicError, match="CL_INVALID_MEM_OBJECT"):
        cl.enqueue_migrate_mem_objects(queue, [5])


def test_image_info_by_name_through_image_attribute(ctx):
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    img = cl.Image(ctx, mf.READ_ONLY, fmt, shape=(8, 4, 2))
    assert (img.image.width, img.image.height, img.image.depth) == (8, 4, 2)
    assert img.image.element_size == 16 and img.image.array_size == 0
    assert img.image.format == fmt
    with pytest.raises(AttributeError, match="no value 'colour'"):
        img.image.colour  # noqa: B018


def test_image_format_fields_are_its_only_attributes():
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    assert (fmt.channel_order, fmt.channel_data_type) == (cl.channel_order.RGBA,
                                                          cl.channel_type.FLOAT)
    assert not hasattr(fmt, "__dict__")  # as PyOpenCL's: a misspelt field raises
    with pytest.raises(AttributeError):
        fmt.channel_type = cl.channel_type.FLOAT
