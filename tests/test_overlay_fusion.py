"""Fused and specialized kernels of the overlay against the same commands run unfused, on
random inputs; and the ``PPCL_OVERLAY`` switch."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.settings import SettingsError, read_settings

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
    plain = cl.CommandQueue(ctx)
    fused = cl.CommandQueue(ctx)
    cl.overlay.enable(fused)
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
