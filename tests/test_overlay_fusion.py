"""Fused and specialized kernels of the overlay against the same commands run unfused, on
random inputs; and the ``PPCL_OVERLAY`` switch."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.settings import SettingsError, read_settings
from tests.child_env import child_env

mf = cl.mem_flags

SOURCE = """
__kernel void gray(__global const float4 *rgb, __global float *g, int w)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int i = y * w + x;
    float4 p = rgb[i];
    g[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
}

__kernel void dx(__global const float *g, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    out[y * w + x] = g[y * w + xr] - g[y * w + xl];
}

__kernel void dy(__global const float *g, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int yu = max(y - 1, 0), yd = min(y + 1, h - 1);
    out[y * w + x] = g[yd * w + x] - g[yu * w + x];
}

__kernel void mag(__global const float *gx, __global const float *gy, __global float *m, int w)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int i = y * w + x;
    m[i] = sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
}
"""


def _plain_and_overlay_queues(ctx):
    """A queue without the overlay and one with it, to compare what the two compute."""
    plain = cl.CommandQueue(ctx)
    fused = cl.CommandQueue(ctx)
    cl.overlay.enable(fused)
    return plain, fused


@pytest.fixture(scope="module")
def prg(ctx):
    return cl.Program(ctx, SOURCE).build()


def sobel(ctx, queue, prg, rgb, w, h, release):
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=rgb)
    g, gx, gy, m = (cl.Buffer(ctx, mf.READ_WRITE, w * h * 4) for _ in range(4))
    prg.gray(queue, (w, h), None, src, g, np.int32(w))
    prg.dx(queue, (w, h), None, g, gx, np.int32(w), np.int32(h))
    prg.dy(queue, (w, h), None, g, gy, np.int32(w), np.int32(h))
    prg.mag(queue, (w, h), None, gx, gy, m, np.int32(w))
    if release:
        for buf in (g, gx, gy):
            buf.release()
    out = np.empty(w * h, np.float32)
    cl.enqueue_copy(queue, out, m)
    kept = np.zeros(w * h, np.float32)
    if not release:
        cl.enqueue_copy(queue, kept, gx)
    return out, kept


@pytest.mark.parametrize("release", [True, False])
def test_fused_sobel_equals_unfused(ctx, prg, release):
    rng = np.random.default_rng(7)
    w, h = 48, 20
    plain, fused = _plain_and_overlay_queues(ctx)
    for _ in range(3):  # the third replay runs the specialized plan from the cache
        rgb = rng.random((h, w, 4), dtype=np.float32)
        expected = sobel(ctx, plain, prg, rgb, w, h, release)
        got = sobel(ctx, fused, prg, rgb, w, h, release)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    notes = cl.overlay.graph().notes
    assert any("fused dx" in n and "horizontal" in n for n in notes)
    assert any("vertical" in n for n in notes)
    assert not any(n.startswith("fused gray") for n in notes)  # dx reads a halo of gray
    assert any(n.startswith("specialized") for n in notes)
    dropped = [n for n in notes if n.startswith("dropped the store")]
    assert bool(dropped) == release


def test_scalar_changing_every_replay_is_not_specialized(ctx, prg):
    queue = cl.CommandQueue(ctx)
    cl.overlay.enable(queue)
    src = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4 * 4)
    g = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4)
    rgb = np.random.default_rng(3).random((1, 16, 4), dtype=np.float32)
    cl.enqueue_copy(queue, src, rgb)
    for width in (16, 8, 4):
        prg.gray(queue, (width, 1), None, src, g, np.int32(width))
        out = np.empty(16, np.float32)
        cl.enqueue_copy(queue, out, g)
    assert not any(n.startswith("specialized") for n in cl.overlay.graph().notes)


def test_overlay_switch_is_parsed():
    assert read_settings({"PPCL_OVERLAY": "1"}).overlay
    assert not read_settings({}).overlay
    with pytest.raises(SettingsError, match="PPCL_OVERLAY"):
        read_settings({"PPCL_OVERLAY": "maybe"})


EXPRESSION = """
__kernel void mul(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);
    c[i] = a[i] * b[i];
}

__kernel void add(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void laplace(__global const float *u, __global float *l, int n)
{
    int i = get_global_id(0);
    l[i] = u[max(i - 1, 0)] + u[min(i + 1, n - 1)] - 2.0f * u[i];
}

__kernel void update(__global const float *u, __global const float *l, __global float *v,
                     float dt)
{
    size_t i = get_global_id(0);
    v[i] = u[i] + dt * l[i];
}
"""


@pytest.fixture(scope="module")
def expr(ctx):
    return cl.Program(ctx, EXPRESSION).build()


def sum_of_products(ctx, queue, expr, arrays):
    n = arrays[0].size
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    total = None
    for a, b in zip(bufs[::2], bufs[1::2]):
        product = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        expr.mul(queue, (n,), None, a, b, product)
        if total is None:
            total = product
            continue
        new_total = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        expr.add(queue, (n,), None, total, product, new_total)
        total.release()
        product.release()
        total = new_total
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, total)
    return out


@pytest.mark.parametrize("operands", [1, 2, 5])
def test_fused_expression_equals_unfused_on_random_inputs(ctx, expr, operands):
    rng = np.random.default_rng(operands)
    plain, fused = _plain_and_overlay_queues(ctx)
    for _ in range(3):
        arrays = [rng.standard_normal(300).astype(np.float32) for _ in range(2 * operands)]
        expected = sum_of_products(ctx, plain, expr, arrays)
        np.testing.assert_array_equal(sum_of_products(ctx, fused, expr, arrays), expected)
    notes = cl.overlay.graph().notes
    assert sum(n.startswith("fused") for n in notes) == 2 * operands - 2


@pytest.mark.parametrize("operands", [2, 8])
def test_sum_of_products_replays_as_one_kernel_storing_only_its_result(ctx, expr, operands):
    """The whole expression is one kernel (one node left to run), and every temporary, released
    by the program, is only forwarded inside it: the kernel stores nothing but the result, so
    its memory traffic is its inputs and its result alone."""
    rng = np.random.default_rng(operands)
    arrays = [rng.standard_normal(256).astype(np.float32) for _ in range(2 * operands)]
    _, fused = _plain_and_overlay_queues(ctx)
    sum_of_products(ctx, fused, expr, arrays)
    graph = cl.overlay.graph()
    assert [node.status for node in graph.nodes].count("run") == 1
    dropped = [n for n in graph.notes if n.startswith("dropped the store")]
    assert len(dropped) == 2 * operands - 2  # every temporary but the result, read by the host
    assert all(n.endswith("then released") for n in dropped)


def heat(ctx, queue, expr, u0, steps):
    n = u0.size
    u = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=u0)
    v = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    lap = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    for _ in range(steps):
        expr.laplace(queue, (n,), None, u, lap, np.int32(n))
        expr.update(queue, (n,), None, u, lap, v, np.float32(0.25))
        u, v = v, u
    out = np.empty(n, np.float32)
    last_lap = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, u)
    cl.enqueue_copy(queue, last_lap, lap)  # lap escapes: its last store must stay
    return out, last_lap


def test_time_steps_drop_overwritten_stores_and_keep_the_last(ctx, expr):
    u0 = np.random.default_rng(5).random(500, dtype=np.float32)
    plain, fused = _plain_and_overlay_queues(ctx)
    for _ in range(3):
        expected = heat(ctx, plain, expr, u0, 6)
        got = heat(ctx, fused, expr, u0, 6)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    notes = cl.overlay.graph().notes
    dropped = [n for n in notes if n.startswith("dropped the store")]
    assert len(dropped) == 5  # every step's but the last, which the host reads
    assert all("overwritten whole" in n for n in dropped)


def test_a_queue_waiting_on_every_command_bypasses_the_overlay(ctx, expr):
    queue = cl.CommandQueue(ctx)
    cl.overlay.enable(queue)
    start = np.linspace(0.9, 1.004, 64, dtype=np.float32)
    a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=start)
    out = np.empty(64, np.float32)
    events = []
    for _ in range(10):
        events.append(expr.mul(queue, (64,), None, a, a, a))
        cl.enqueue_copy(queue, out, a)
    assert queue._overlay_passes > 0
    assert all(e.command_execution_status == cl.command_execution_status.COMPLETE
               for e in events)
    expected = start
    for _ in range(10):
        expected = expected * expected
    np.testing.assert_array_equal(out, expected)


def test_ppcl_overlay_records_an_unmodified_program():
    import subprocess
    import sys

    program = """
import numpy as np, ppcl as cl
ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, "__kernel void twice(__global float *x) { int i = get_global_id(0); x[i] *= 2.0f; }").build()
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(8, np.float32))
event = prg.twice(queue, (8,), None, buf)
assert event._status == cl.command_execution_status.QUEUED
out = np.empty(8, np.float32)
cl.enqueue_copy(queue, out, buf)
assert (out == 2).all() and cl.overlay.graph() is not None
print("recorded")
"""
    env = child_env({"PPCL_OVERLAY": "1"})
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "recorded"


POINTWISE = """
__kernel void luma(__global const uchar4 *rgb, __global float *g)
{
    size_t i = get_global_id(0);
    float4 p = convert_float4(rgb[i]);
    g[i] = 0.25f * p.x + 0.5f * p.y + 0.25f * p.z;
}

__kernel void forward_difference(__global const float *g, __global float *d, int n)
{
    int i = get_global_id(0);
    d[i] = g[min(i + 1, n - 1)] - g[i];
}

__kernel void box(__global const float *g, __global float *d, int n)
{
    int i = get_global_id(0);
    d[i] = g[max(i - 1, 0)] + g[i] + g[min(i + 1, n - 1)];
}
"""


@pytest.mark.parametrize("consumer, recomputed", [("forward_difference", True), ("box", False)])
def test_point_wise_producer_recomputed_for_a_two_point_consumer(ctx, consumer, recomputed):
    prg = cl.Program(ctx, POINTWISE).build()
    rng = np.random.default_rng(11)
    n = 333
    plain, fused = _plain_and_overlay_queues(ctx)

    def run(queue, rgb):
        src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=rgb)
        g = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        d = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        prg.luma(queue, (n,), None, src, g)
        getattr(prg, consumer)(queue, (n,), None, g, d, np.int32(n))
        g.release()
        out = np.empty(n, np.float32)
        cl.enqueue_copy(queue, out, d)
        return out

    for _ in range(3):
        rgb = rng.integers(0, 256, (n, 4), dtype=np.uint8)
        np.testing.assert_array_equal(run(fused, rgb), run(plain, rgb))
    notes = cl.overlay.graph().notes
    assert any("recomputation" in note for note in notes) == recomputed
    assert any(note.startswith("dropped the producer") for note in notes) == recomputed


RETYPED = """
__kernel void to_bytes(__global const float *a, __global uchar *b)
{
    int i = get_global_id(0);
    b[i] = (uchar)a[i];
}

__kernel void as_words(__global const int *b, __global int *c)
{
    int i = get_global_id(0);
    c[i] = b[i] + 1;
}

__kernel void flip(__global const uint *b, __global uint *c)
{
    int i = get_global_id(0);
    c[i] = b[i] ^ 0x80000000u;
}

__kernel void halve(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    b[i] = a[i] * 0.5f;
}
"""


@pytest.mark.parametrize("producer, consumer", [("to_bytes", "as_words"), ("halve", "flip")])
def test_a_buffer_read_as_another_type_is_not_forwarded(ctx, producer, consumer):
    """The same index into a buffer seen as another element type is another element (or the
    same bytes read as other bits): the consumer must load what the producer stored."""
    prg = cl.Program(ctx, RETYPED).build()
    n = 256
    a = np.arange(n, dtype=np.float32)
    plain, fused = _plain_and_overlay_queues(ctx)

    def run(queue):
        src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        b = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        c = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        getattr(prg, producer)(queue, (n,), None, src, b)
        getattr(prg, consumer)(queue, (n,), None, b, c)
        out = np.empty(n, np.int32)
        cl.enqueue_copy(queue, out, c)
        return out

    np.testing.assert_array_equal(run(fused), run(plain))
    assert not any(note.startswith("fused") for note in cl.overlay.graph().notes)


IN_PLACE = """
__kernel void brighten(__global float *g, float s)
{
    int i = get_global_id(0);
    g[i] = g[i] * s + 1.0f;
}

__kernel void forward_difference(__global const float *g, __global float *d, int n)
{
    int i = get_global_id(0);
    d[i] = g[min(i + 1, n - 1)] - g[i];
}
"""


def test_an_in_place_update_is_not_recomputed_at_a_neighbour(ctx):
    """A producer reading the element it overwrites is not point-wise for a consumer reading
    the next element: recomputed there, it would load a value another work-item updated."""
    prg = cl.Program(ctx, IN_PLACE).build()
    n = 1024
    g0 = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    plain, fused = _plain_and_overlay_queues(ctx)

    def run(queue):
        g = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=g0)
        d = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        prg.brighten(queue, (n,), None, g, np.float32(0.5))
        prg.forward_difference(queue, (n,), None, g, d, np.int32(n))
        out = np.empty(n, np.float32)
        cl.enqueue_copy(queue, out, d)
        return out

    np.testing.assert_array_equal(run(fused), run(plain))
    assert not any("recomputation" in note for note in cl.overlay.graph().notes)


SCALAR_SHAPED = """
__kernel void twice(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    b[i] = a[i] * 2.0f;
}

__kernel void look(__global const float *b, __global float *c, int k, int n)
{
    int i = get_global_id(0);
    c[i] = b[min(i + k, n - 1)] + 1.0f;
}

__kernel void put(__global float *b, int s)
{
    int i = get_global_id(0);
    b[i * s] = 5.0f;
}
"""


@pytest.mark.parametrize("consumer, values", [("look", [1, 0, 1, 0, 3]), ("put", [1, 0, 0, 1, 0])])
def test_a_plan_rests_on_no_value_that_varies(ctx, consumer, values):
    """Whether the consumer reads the producer's own element (look at k == 0) or overwrites
    the whole buffer (put at s == 1) depends on an integer argument: a plan made while it had
    one value must not serve a replay where it has another."""
    prg = cl.Program(ctx, SCALAR_SHAPED).build()
    n = 256
    a = np.arange(n, dtype=np.float32)
    plain, fused = _plain_and_overlay_queues(ctx)
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    c = cl.Buffer(ctx, mf.READ_WRITE, n * 4)

    def run(queue, value):
        prg.twice(queue, (n,), None, src, b)
        if consumer == "look":
            prg.look(queue, (n,), None, b, c, np.int32(value), np.int32(n))
        else:
            prg.put(queue, (n,), None, b, np.int32(value))
        out = np.empty(n, np.float32)
        cl.enqueue_copy(queue, out, c if consumer == "look" else b)
        return out

    for value in values:
        np.testing.assert_array_equal(run(fused, value), run(plain, value), f"value {value}")
