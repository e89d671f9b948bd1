"""Short counted loops over private arrays and ``__constant`` tables unrolled (pass
``unroll``): which loops are unrolled and why not (the plans), results equal to the kernels
built without the pass on awkward sizes, and the unrolled work-item loop vectorizing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ppcl
import ppcl as cl
import ppcl.runtime.platform
from ppcl.devices.serial import SerialDevice
from tests.launch import build_kernel, plan_text

mf = cl.mem_flags

SOURCE = """
__constant int DX[5] = {0, 1, -1, 0, 0};
__constant int DY[5] = {0, 0, 0, 1, -1};
__constant float WEIGHT[5] = {0.5f, 0.125f, 0.125f, 1.0f / 8.0f};  /* the last one is 0 */
__constant float TAPS[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};

/* five directions of a structure-of-arrays record, pulled from periodic neighbours */
__kernel void pull(__global const float *src, __global float *dst, int nx, int ny)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    float f[5];
    for (int q = 0; q < 5; q++) {
        int xs = x - DX[q], ys = y - DY[q];
        if (xs < 0) xs += nx;
        if (xs >= nx) xs -= nx;
        if (ys < 0) ys += ny;
        if (ys >= ny) ys -= ny;
        f[q] = src[q * nx * ny + ys * nx + xs];
    }
    float sum = 0.0f;
    for (int q = 4; q >= 0; --q)
        sum += WEIGHT[q] * f[q];
    for (int q = 0; q < 5; q += 1)
        dst[q * nx * ny + y * nx + x] = f[q] - sum;
}

/* a 3x3 filter in two nested loops over a table */
__kernel void filter(__global const float *in, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    float acc = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            acc += TAPS[(j + 1) * 3 + i + 1] * in[(y + j) * w + x + i];
    out[y * w + x] = acc / 16.0f;
}

/* each work-item its own record of five: stays a loop */
__kernel void record(__global const float *src, __global float *dst)
{
    int i = get_global_id(0);
    float f[5];
    for (int q = 0; q < 5; q++)
        f[q] = src[i * 5 + q] * WEIGHT[q];
    for (int q = 0; q < 5; q++)
        dst[i * 5 + q] = f[4 - q];
}

/* loops the pass keeps, for the reason in their names */
__kernel void kept(__global const float *src, __global float *dst, int n)
{
    int i = get_global_id(0);
    float f[20];
    for (int q = 0; q < 20; q++)            /* too many trips */
        f[q] = src[i] + q;
    float s = 0.0f;
    #pragma unroll 1
    for (int q = 0; q < 4; q++)             /* the pragma */
        s += f[q] * WEIGHT[q];
    for (int q = 0; q < 4; q++) {           /* a break */
        if (f[q] > 3.0f)
            break;
        s += f[q];
    }
    for (int q = 0; q < n; q++)             /* a bound known at the launch only */
        s += f[q % 20];
    for (int q = 0; q < 4; q++)             /* nothing to fold */
        s += src[i] * q;
    dst[i] = s;
}

/* counters compared as unsigned, stepping down by two */
__kernel void bounds(__global const float *src, __global float *dst)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int q = -1; q < 2u; q++)      /* -1 compared as unsigned: the loop never runs */
        s += TAPS[q + 1] * src[i];
    for (int q = 8; q >= 0; q -= 2)    /* 8, 6, 4, 2, 0 */
        s += TAPS[q] * src[i + q];
    dst[i] = s;
}

/* a counter that would wrap around its type (built, never run: the loop does not end) */
__kernel void wraps(__global float *dst)
{
    float s = 0.0f;
    for (char c = 120; c < 130; c++)
        s += TAPS[c & 7];
    dst[get_global_id(0)] = s;
}

/* filter weights in a private two-dimensional array initialized with constants: a table */
__kernel void weights(__global const float *in, __global float *out, int w)
{
    int x = get_global_id(0) + 1, y = get_global_id(1) + 1;
    float k[3][3] = {{1, 2, 1}, {2, 4}, {1, 2, 1}};   /* k[1][2] left out: 0 */
    float s = 0.0f;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            s += k[j][i] * in[(y + j - 1) * w + x + i - 1];
    float c[2] = {0.5f, 0.25f};                        /* written below: no table */
    c[1] = in[y * w + x];
    for (int q = 0; q < 2; q++)
        s += c[q];
    out[y * w + x] = s;
}

/* a private array passed by address stays an array; the loop still unrolls */
float total(const float *v) { return v[0] + v[1] + v[2]; }
__kernel void address(__global const float *src, __global float *dst)
{
    int i = get_global_id(0);
    float v[3];
    for (int q = 0; q < 3; q++)
        v[q] = src[i] * DX[q + 1];
    dst[i] = total(v);
}
"""

# kernel, lines the plans must hold
DECISIONS = [
    ("pull", ["unrolled 5 times: q indexes DX, DY, f", "indexes WEIGHT, f",
              "private array f as 5 scalars"]),
    ("filter", ["unrolled 3 times: i indexes TAPS", "unrolled 3 times: j indexes TAPS"]),
    ("record", ["not unrolled: src is strided across work-items",
                "not unrolled: dst is strided across work-items"]),
    ("kept", ["not unrolled: #pragma unroll 1", "not unrolled: break, continue or return",
              "not unrolled: q_4 indexes no private array or constant table"]),
    ("address", ["unrolled 3 times: q indexes DX, v"]),
    ("bounds", ["unrolled 0 times: q indexes TAPS", "unrolled 5 times: q_1 indexes TAPS"]),
    ("weights", ["unrolled 3 times: i indexes k", "unrolled 3 times: j indexes k",
                 "unrolled 2 times: q indexes c", "private array c as 2 scalars",
                 "private table k: every element read became its value"]),
]


def _plans(name: str) -> list[str]:
    return plan_text(SOURCE, name).splitlines()


@pytest.mark.parametrize("name, wanted", DECISIONS)
def test_plans_name_each_loop_and_why(name: str, wanted: list[str]) -> None:
    lines = _plans(name)
    for text in wanted:
        assert any(text in line for line in lines), (text, lines)


def test_loops_the_pass_keeps_are_left_alone() -> None:
    lines = _plans("kept")
    assert not any("unrolled " in line and "not unrolled" not in line for line in lines), lines
    assert not any("as 20 scalars" in line for line in lines), lines
    assert not any("private array v as" in line for line in _plans("address"))
    assert not any("unrolled" in line for line in _plans("wraps"))


def test_the_build_option_turns_the_pass_off() -> None:
    lines = plan_text(SOURCE, "pull", options="-ppcl-no-unroll").splitlines()
    assert any("unroll: off (build option -ppcl-no-unroll)" in line for line in lines), lines
    assert not any("unrolled" in line for line in lines), lines


@pytest.fixture(scope="module")
def contexts() -> tuple[tuple[cl.Context, str], tuple[cl.Context, str]]:
    """The serial device, building with the pass and without it."""
    platform = ppcl.get_platforms()[0]
    ctx = cl.Context([ppcl.runtime.platform.Device(platform, SerialDevice())])
    return (ctx, ""), (ctx, "-ppcl-no-unroll")


def _run(build: tuple[cl.Context, str], name: str, gsize: tuple[int, ...],
         arrays: list[np.ndarray], scalars: tuple[Any, ...],
         local: tuple[int, ...] | None = None) -> np.ndarray:
    ctx, options = build
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build(options=options)
    buffers = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    getattr(prg, name)(queue, gsize, local, *buffers, *scalars)
    out = np.empty_like(arrays[-1])
    cl.enqueue_copy(queue, out, buffers[-1])
    return out


@pytest.mark.parametrize("nx, ny", [(1, 1), (3, 2), (17, 5), (64, 33)])
def test_pull_equals_the_build_without_the_pass_and_numpy(contexts, nx: int, ny: int) -> None:
    rng = np.random.default_rng(nx * ny)
    src = rng.standard_normal((5, ny, nx)).astype(np.float32)
    dst = np.zeros_like(src)
    gsize = (-(-nx // 16) * 16, ny)
    got, without = (_run(c, "pull", gsize, [src, dst], (np.int32(nx), np.int32(ny)), (16, 1))
                    for c in contexts)
    np.testing.assert_array_equal(got, without)
    dx, dy = [0, 1, -1, 0, 0], [0, 0, 0, 1, -1]
    weight = np.array([0.5, 0.125, 0.125, 0.125, 0.0], np.float32)
    f = np.stack([np.roll(src[q], (dy[q], dx[q]), axis=(0, 1)) for q in range(5)])
    total = np.zeros((ny, nx), np.float32)
    for q in range(4, -1, -1):
        total = (total + weight[q] * f[q]).astype(np.float32)
    np.testing.assert_allclose(got, f - total, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("w, h", [(3, 3), (18, 7), (70, 31)])
def test_filter_equals_the_build_without_the_pass(contexts, w: int, h: int) -> None:
    rng = np.random.default_rng(w)
    src = rng.standard_normal((h, w)).astype(np.float32)
    out = np.zeros_like(src)
    got, without = (_run(c, "filter", (w, h), [src, out], (np.int32(w), np.int32(h)))
                    for c in contexts)
    np.testing.assert_array_equal(got, without)
    taps = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    inner = sum(taps[j, i] * src[j:h - 2 + j, i:w - 2 + i] for j in range(3) for i in range(3))
    np.testing.assert_allclose(got[1:-1, 1:-1], inner / 16, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, n", [("record", 37), ("kept", 29), ("address", 41),
                                     ("bounds", 23)])
def test_other_kernels_equal_the_build_without_the_pass(contexts, name: str, n: int) -> None:
    rng = np.random.default_rng(n)
    width = 5 if name == "record" else 1
    src = rng.random(n * width + 8).astype(np.float32) * 4
    dst = np.zeros_like(src)
    scalars = (np.int32(7),) if name == "kept" else ()
    got, without = (_run(c, name, (n,), [src, dst], scalars) for c in contexts)
    np.testing.assert_array_equal(got, without)


@pytest.mark.parametrize("w, h", [(3, 3), (19, 6), (66, 17)])
def test_private_weights_equal_the_build_without_the_pass_and_numpy(contexts, w: int,
                                                                   h: int) -> None:
    rng = np.random.default_rng(w * h)
    src = rng.standard_normal((h, w)).astype(np.float32)
    out = np.zeros_like(src)
    got, without = (_run(c, "weights", (w - 2, h - 2), [src, out], (np.int32(w),))
                    for c in contexts)
    np.testing.assert_array_equal(got, without)
    k = np.array([[1, 2, 1], [2, 4, 0], [1, 2, 1]], np.float32)
    inner = sum(k[j, i] * src[j:h - 2 + j, i:w - 2 + i] for j in range(3) for i in range(3))
    np.testing.assert_allclose(got[1:-1, 1:-1], inner + 0.5 + src[1:-1, 1:-1], rtol=1e-5,
                               atol=1e-5)


def test_no_table_load_is_left_in_the_unrolled_filter() -> None:
    """The weights became literals: the generated C reads no ``k`` at all."""
    c = build_kernel(SOURCE, "weights", local_size=(16, 1)).c_source
    group = c[c.index("ppcl_group_weights("):]
    assert "ppcl_u_k" not in group, group[:2000]


@pytest.mark.cpu_device
def test_the_unrolled_work_item_loop_vectorizes() -> None:
    kernel = build_kernel(SOURCE, "pull", local_size=(16, 1), want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report
