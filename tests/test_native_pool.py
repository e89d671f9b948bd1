"""The CPU device's native pool (ppcl/devices/cpu/runtime.c): every group runs once whatever the
number of groups and threads, arguments change between launches, several Python threads launch
at once, faults and Ctrl-C come back as errors instead of ending the interpreter."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.cpu import CPUDevice
from ppcl.runtime.platform import Device as RuntimeDevice
from tests.child_env import child_env

COUNT = """
__kernel void count(__global int *hits, __global int *items)
{
    atomic_inc(&hits[get_group_id(0)]);
    items[get_global_id(0)] += 1;
}
__kernel void axpb(__global float *y, __global const float *x, float a, float b)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + b;
}
__kernel void group_sum(__global const float *x, __global float *out, __local float *scratch)
{
    size_t l = get_local_id(0);
    scratch[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t k = 0; k < get_local_size(0); k++)
            s += scratch[k];
        out[get_group_id(0)] = s;
    }
}
"""


def _context(threads: int) -> cl.Context:
    return cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], CPUDevice(threads))])


def _zeros(ctx: cl.Context, n: int) -> cl.Buffer:
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=np.zeros(n, np.int32))


@pytest.mark.parametrize("threads, groups, local", [
    (4, 1000, 8),   # many groups, chunks claimed by every thread
    (4, 1, 64),     # one group: the caller runs it
    (8, 3, 16),     # more threads than groups
    (1, 50, 4),     # one thread: everything in the caller
])
def test_every_group_runs_exactly_once(threads: int, groups: int, local: int) -> None:
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, COUNT).build().count
    hits, items = _zeros(ctx, groups), _zeros(ctx, groups * local)
    for _ in range(5):
        kernel(queue, (groups * local,), (local,), hits, items)
    got_hits = np.empty(groups, np.int32)
    got_items = np.empty(groups * local, np.int32)
    cl.enqueue_copy(queue, got_hits, hits)
    cl.enqueue_copy(queue, got_items, items)
    assert (got_hits == 5 * local).all()
    assert (got_items == 5).all()


SKEWED = """
__kernel void skewed(__global const int *work, __global int *out)
{
    int g = get_group_id(0);
    int acc = 0;
    for (int k = 0; k < work[g]; k++)
        acc += (k ^ g) & 7;
    atomic_add(&out[g], acc);
    out[get_num_groups(0) + get_global_id(0)] += 1;
}
"""


@pytest.mark.parametrize("threads, groups, heavy", [
    (4, 1000, "first"),  # the first chunks hold the work: the threads claim the others
    (4, 1000, "last"),   # the last chunk holds it
    (2, 4096, "spread"),
    (4, 1, "first"),     # one group
    (8, 5, "last"),      # more threads than groups
])
def test_groups_of_skewed_work_each_run_once(threads: int, groups: int, heavy: str) -> None:
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, SKEWED).build().skewed
    local = 4
    work = np.full(groups, 3, np.int32)
    if heavy == "first":
        work[: max(1, groups // 10)] = 20000
    elif heavy == "last":
        work[-max(1, groups // 10):] = 20000
    else:
        work[::97] = 20000
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    work_buf = cl.Buffer(ctx, flags, hostbuf=work)
    out = _zeros(ctx, groups + groups * local)
    for _ in range(3):
        kernel(queue, (groups * local,), (local,), work_buf, out)
    got = np.empty(groups + groups * local, np.int32)
    cl.enqueue_copy(queue, got, out)
    per_group = np.array([int(((np.arange(w) ^ g) & 7).sum()) for g, w in enumerate(work)])
    assert (got[:groups] == 3 * local * per_group).all()
    assert (got[groups:] == 3).all()


def test_arguments_changed_between_launches_are_used() -> None:
    ctx = _context(2)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, COUNT).build().axpb
    n = 4096
    x = np.arange(n, dtype=np.float32)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    xs = [cl.Buffer(ctx, flags, hostbuf=x * k) for k in (1, 2)]
    ys = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4) for _ in range(2)]
    out = np.empty(n, np.float32)
    for step in range(6):
        a, b = np.float32(step), np.float32(-step)
        kernel.set_args(ys[step % 2], xs[step // 3], a, b)  # buffers and values change
        cl.enqueue_nd_range_kernel(queue, kernel, (n,), (256,))
        cl.enqueue_copy(queue, out, ys[step % 2])
        np.testing.assert_array_equal(out, a * (x * (1 + step // 3)) + b)


def test_local_memory_per_thread_is_separate() -> None:
    ctx = _context(4)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, COUNT).build().group_sum
    n, local = 1 << 16, 64
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, n // local * 4)
    for size in (local, 2 * local):  # a larger __local argument grows every thread's block
        kernel(queue, (n,), (local,), xb, out, cl.LocalMemory(size * 4))
        got = np.empty(n // local, np.float32)
        cl.enqueue_copy(queue, got, out)
        np.testing.assert_allclose(got, x.reshape(-1, local).sum(axis=1), rtol=1e-5)


def test_several_python_threads_launch_at_once() -> None:
    ctx = _context(2)
    kernel_program = cl.Program(ctx, COUNT).build()
    n = 8192
    errors: list[BaseException] = []

    def launch(index: int) -> None:
        try:
            queue = cl.CommandQueue(ctx)
            kernel = kernel_program.axpb  # a kernel object per thread, one launch shape
            x = np.full(n, index, np.float32)
            xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
            yb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4)
            out = np.empty(n, np.float32)
            for step in range(40):
                kernel(queue, (n,), (128,), yb, xb, np.float32(step), np.float32(index))
                cl.enqueue_copy(queue, out, yb)
                assert (out == step * index + index).all(), (index, step)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=launch, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


FAULT = """
__kernel void wild(__global float *x, long far)
{
    x[get_global_id(0) * far] = 1.0f;
}
__kernel void divide(__global int *x, int d)
{
    x[get_global_id(0)] = x[get_global_id(0)] / d;
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_faulting_kernel_is_an_error_and_the_device_goes_on(threads: int) -> None:
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, FAULT).build()
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
    with pytest.raises(cl.Error, match="OUT_OF_RESOURCES.*segmentation fault") as info:
        prg.wild(queue, (64,), (8,), buf, np.int64(1 << 40))
    assert "kernel 'wild'" in str(info.value)
    assert "launch: global size (64,), local size (8,)" in str(info.value)
    assert "PPCL_DEVICES=check" in str(info.value)
    ints = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=np.arange(64, dtype=np.int32))
    prg.divide(queue, (64,), (8,), ints, np.int32(0))  # unspecified values, never a trap
    # through an event: an out-of-order queue runs the command on a command thread
    async_queue = cl.CommandQueue(
        ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    event = prg.wild(async_queue, (64,), (8,), buf, np.int64(1 << 40))
    with pytest.raises(cl.Error):
        event.wait()
    assert event.command_execution_status < 0
    # the device still runs kernels
    cl.enqueue_copy(queue, ints, np.arange(64, dtype=np.int32))
    prg.divide(queue, (64,), (8,), ints, np.int32(2))
    got = np.empty(64, np.int32)
    cl.enqueue_copy(queue, got, ints)
    np.testing.assert_array_equal(got, np.arange(64, dtype=np.int32) // 2)


@pytest.mark.cpu_device  # PPCL_THREADS=1: a pool of one thread
def test_one_thread_setting_runs_kernels() -> None:
    script = textwrap.dedent("""
        import numpy as np, ppcl as cl
        ctx = cl.create_some_context(interactive=False)
        assert ctx.devices[0].max_compute_units == 1
        queue = cl.CommandQueue(ctx)
        src = "__kernel void f(__global int *x) { x[get_global_id(0)] *= 3; }"
        x = np.arange(1000, dtype=np.int32)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        cl.Program(ctx, src).build().f(queue, (1000,), None, buf)
        cl.enqueue_copy(queue, x, buf)
        print(int(x.sum()))
    """)
    env = child_env({"PPCL_THREADS": "1"})
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(3 * sum(range(1000)))]


ENDLESS = textwrap.dedent("""
    import sys, time, numpy as np, ppcl as cl
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=int(sys.argv[1]))
    src = '''
    __kernel void endless(__global float *x) {
        while (x[0] >= 0.0f) x[get_global_id(0)] += 1.0f;
    }
    __kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }
    '''
    prg = cl.Program(ctx, src).build()
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096 * 4)
    done = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=np.ones(256, np.float32))
    print("launching", flush=True)
    try:
        prg.endless(queue, (4096,), (64,), buf).wait()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    queue = cl.CommandQueue(ctx)
    prg.twice(queue, (256,), (64,), done)
    out = np.empty(256, np.float32)
    cl.enqueue_copy(queue, out, done)
    print("after", out.sum(), flush=True)
""")


@pytest.mark.cpu_device  # the pool abandons its groups; a GPU kernel runs on to its end
@pytest.mark.parametrize("properties", [0, 1], ids=["in-order", "out-of-order"])
def test_ctrl_c_abandons_an_endless_kernel(properties: int) -> None:
    env = child_env({"PPCL_THREADS": "2"})
    child = subprocess.Popen([sys.executable, "-c", ENDLESS, str(properties)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "launching"
    time.sleep(1.5)  # the build and then the endless launch
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"Ctrl-C did not stop the wait: {out!r} {err!r}")
    assert child.returncode == 0, err
    assert out.split() == ["interrupted", "after", "512.0"], err


LARGE_CONTEXT = """
__kernel void k(__global float *out)
{
    float p[512];
    int l = get_local_id(0);
    for (int j = 0; j < 512; j++)
        p[j] = l + j;
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (int j = 0; j < 512; j++)
        s += p[j];
    out[get_global_id(0)] = s;
}
"""


@pytest.mark.cpu_device  # context arrays of the CPU work-group function, 4096-item groups
@pytest.mark.parametrize("local", [4096, 64])
def test_context_arrays_larger_than_a_stack_run(local: int) -> None:
    """A 512-float private array live across a barrier at the largest local size the device
    advertises takes 8 MiB of context arrays: more than a thread's stack, so they live in the
    group's block (64 work-items: 128 KiB, on the stack)."""
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, LARGE_CONTEXT).build().k
    device = ctx.devices[0]
    assert kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device) >= 4096
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 8192)
    kernel(queue, (8192,), (local,), out)
    got = np.empty(8192, np.float32)
    cl.enqueue_copy(queue, got, out)
    lid = np.arange(8192) % local
    np.testing.assert_array_equal(got, (512 * lid + 511 * 512 // 2).astype(np.float32))


STEADY = """
__kernel void scatter(__global int *out, __global const long *at)
{
    out[at[get_global_id(0)]] += 1;
}
__kernel void scale(__global float *y, __global const float *x, float a)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i];
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_repeated_launch_faulting_later_is_an_error_and_the_device_goes_on(threads: int) -> None:
    # the same kernel and arguments launched again take the steady way (kernel.py and
    # CPULaunch.run skip their checks); a fault there is reported as on the first launch
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, STEADY).build()
    out = _zeros(ctx, 64)
    at = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                   hostbuf=np.arange(64, dtype=np.int64))
    knl = prg.scatter
    knl.set_args(out, at)
    for _ in range(5):
        cl.enqueue_nd_range_kernel(queue, knl, (64,), (8,))
    cl.enqueue_copy(queue, at, np.full(64, 1 << 40, np.int64))
    with pytest.raises(cl.Error, match="OUT_OF_RESOURCES.*segmentation fault"):
        cl.enqueue_nd_range_kernel(queue, knl, (64,), (8,))
    cl.enqueue_copy(queue, at, np.arange(64, dtype=np.int64))
    for _ in range(3):
        cl.enqueue_nd_range_kernel(queue, knl, (64,), (8,))
    got = np.empty(64, np.int32)
    cl.enqueue_copy(queue, got, out)
    assert (got >= 8).all()  # the faulting launch may have counted some items before it stopped


def test_a_repeated_launch_sees_released_arguments_and_new_ones() -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, STEADY).build().scale
    n = 4096
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    x = cl.Buffer(ctx, flags, hostbuf=np.arange(n, dtype=np.float32))
    y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    knl.set_args(y, x, np.float32(2))
    for _ in range(4):
        cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    got = np.empty(n, np.float32)
    cl.enqueue_copy(queue, got, y)
    np.testing.assert_array_equal(got, 2 * np.arange(n, dtype=np.float32))
    # another object released: the launch goes on, checked again
    cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16).release()
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    # the sizes as numpy arrays and lists between launches of the same shape
    cl.enqueue_nd_range_kernel(queue, knl, np.array([n]), np.array([64]))
    cl.enqueue_nd_range_kernel(queue, knl, [n], [64])
    cl.enqueue_nd_range_kernel(queue, knl, (n // 2, 2), None)
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    # a new scalar, then a new buffer, between launches of the same shape
    knl.set_arg(2, np.float32(3))
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    cl.enqueue_copy(queue, got, y)
    np.testing.assert_array_equal(got, 3 * np.arange(n, dtype=np.float32))
    x2 = cl.Buffer(ctx, flags, hostbuf=np.ones(n, np.float32))
    knl.set_arg(1, x2)
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    cl.enqueue_copy(queue, got, y)
    np.testing.assert_array_equal(got, np.full(n, 3, np.float32))
    # an argument released, then one deleted, after launches that took the steady way
    x2.release()
    with pytest.raises(cl.LogicError, match="INVALID_MEM_OBJECT.*released"):
        cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    knl.set_arg(1, x)
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    cl.enqueue_nd_range_kernel(queue, knl, (n,), None)
    del x
    with pytest.raises(cl.LogicError, match="INVALID_MEM_OBJECT.*deleted"):
        cl.enqueue_nd_range_kernel(queue, knl, (n,), None)


def test_repeated_launches_from_two_queues_and_threads_keep_their_arguments() -> None:
    # one kernel object per thread, one program: the launches of one shape share the device's
    # kept argument block, which each thread's steady launches must not take for its own
    ctx = _context(2)
    prg = cl.Program(ctx, STEADY).build()
    n = 1024
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    errors: list[BaseException] = []

    def work(value: float) -> None:
        try:
            queue = cl.CommandQueue(ctx)
            knl = prg.scale
            x = cl.Buffer(ctx, flags, hostbuf=np.arange(n, dtype=np.float32))
            y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
            knl.set_args(y, x, np.float32(value))
            got = np.empty(n, np.float32)
            for _ in range(300):
                cl.enqueue_nd_range_kernel(queue, knl, (n,), (64,))
                cl.enqueue_nd_range_kernel(queue, knl, (n,), (64,))
                cl.enqueue_copy(queue, got, y)
                np.testing.assert_array_equal(got, value * np.arange(n, dtype=np.float32))
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    workers = [threading.Thread(target=work, args=(v,)) for v in (2.0, 5.0, 7.0)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[0]
