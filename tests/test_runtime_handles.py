"""Integer handles (``int_ptr``/``from_int_ptr``), a queue used after its ``with`` block, and
``Kernel.capture_call``: PyOpenCL's API for passing objects between libraries, its context
manager's warning, and its way of writing one kernel call out as a program."""

import io
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ppcl as cl
from ppcl import cltypes

SOURCE = """
typedef struct { int n; float s; } pair;
__kernel void mix(__global const float *a, __global float *r, __local float *t, float2 v,
                  pair p, int m)
{
    int i = get_global_id(0);
    t[get_local_id(0)] = a[i];
    r[i] = t[get_local_id(0)] * p.s + v.y + m + p.n + OFFSET;
}
"""
PAIR = np.dtype([("n", np.int32), ("s", np.float32)])


@pytest.fixture
def ctx():
    return cl.create_some_context(interactive=False)


def test_every_object_comes_back_from_its_int_ptr(ctx):
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, "__kernel void k(__global int *a) { a[0] = 1; }").build()
    image = cl.Image(ctx, cl.mem_flags.READ_ONLY,
                     cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT), (4, 4))
    objects = [ctx.devices[0], ctx.devices[0].platform, ctx, queue, cl.enqueue_marker(queue),
               cl.UserEvent(ctx), program, program.k, cl.Buffer(ctx, 0, 16), image,
               cl.Sampler(ctx, False, cl.addressing_mode.CLAMP, cl.filter_mode.NEAREST)]
    for obj in objects:
        assert type(obj).from_int_ptr(obj.int_ptr) is obj
        assert type(obj).from_int_ptr(obj.int_ptr, retain=False) is obj
    assert cl.MemoryObject.from_int_ptr(image.int_ptr) is image  # a subclass is one


def test_a_handle_of_another_type_or_of_nothing_is_refused(ctx):
    queue = cl.CommandQueue(ctx)
    with pytest.raises(cl.LogicError, match="names a CommandQueue, not a Context") as info:
        cl.Context.from_int_ptr(queue.int_ptr)
    assert info.value.code == -30  # CL_INVALID_VALUE
    buffer = cl.Buffer(ctx, 0, 16)
    handle = buffer.int_ptr
    del buffer  # the handle remembers the object weakly: it is gone
    with pytest.raises(cl.LogicError, match="no live ppcl object"):
        cl.Buffer.from_int_ptr(handle)


def test_a_queue_used_after_its_with_block_warns_and_still_runs(ctx):
    program = cl.Program(ctx, "__kernel void twice(__global float *a)"
                              "{ a[get_global_id(0)] *= 2; }").build()
    host = np.arange(8, dtype=np.float32)
    buffer = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    with cl.CommandQueue(ctx) as queue:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # inside the block: no warning
            program.twice(queue, (8,), None, buffer)
    with pytest.warns(cl.CommandQueueUsedAfterExit):
        queue.flush()
    with pytest.warns(cl.CommandQueueUsedAfterExit):
        program.twice(queue, (8,), None, buffer)
    out = np.empty_like(host)
    with pytest.warns(cl.CommandQueueUsedAfterExit):
        cl.enqueue_copy(queue, out, buffer)
    np.testing.assert_array_equal(out, host * 4)


def _call_arguments(ctx, host):
    mf = cl.mem_flags
    return [cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=host), cl.Buffer(ctx, 0, host.nbytes),
            cl.LocalMemory(16 * 4), cltypes.make_float2(1.5, 5.0),
            np.array((3, 2.0), dtype=PAIR)[()], np.int32(7)]


def test_a_captured_call_run_as_a_program_gives_the_calls_result(ctx, tmp_path):
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SOURCE).build(options=["-D", "OFFSET=100"])
    host = np.linspace(-1, 1, 64).astype(np.float32)
    args = _call_arguments(ctx, host)
    path = tmp_path / "captured.py"
    program.mix.capture_call(str(path), queue, (64,), (16,), *args)
    program.mix(queue, (64,), (16,), *args)  # the call itself, after the capture
    expected = np.empty_like(host)
    cl.enqueue_copy(queue, expected, args[1])
    np.testing.assert_allclose(expected, host * 2 + 5 + 7 + 3 + 100)

    text = io.StringIO()
    program.mix.capture_call(text, queue, (64,), (16,), *args)
    namespace: dict = {}
    exec(compile(text.getvalue(), "captured.py", "exec"), namespace)
    replay_queue, replay_args = namespace["main"]()
    got = np.empty_like(host)
    cl.enqueue_copy(replay_queue, got, replay_args[1])
    np.testing.assert_array_equal(got, expected)
    # and as a program of its own, in a fresh interpreter
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_capture_call_refuses_what_it_cannot_write(ctx):
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, "__kernel void k(__global int *a, int n) { a[0] = n; }").build()
    with pytest.raises(cl.LogicError, match="takes 2 arguments, 1 given"):
        program.k.capture_call(io.StringIO(), queue, (1,), None, cl.Buffer(ctx, 0, 4))
    sampler = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP, cl.filter_mode.NEAREST)
    with pytest.raises(cl.LogicError, match="not images or samplers"):
        program.k.capture_call(io.StringIO(), queue, (1,), None, sampler, np.int32(1))
