"""Loops whose trip count varies per work-item, run by the group under a loop mask (work-group
formation's ``masked_refusal``): which loops are taken and which stay (the plans), and the
results equal to the kernels built with ``-ppcl-no-masked-loops`` and to numpy, at 1D, 2D and
3D local sizes, sizes that leave a partial group under a guard, and with ``break``,
``continue``, stores and loads in the loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.callgraph import arithmetic_helpers
from ppcl.compiler.frontend import compile_source, parse_build_options
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from tests.launch import plan_text

mf = cl.mem_flags

SOURCE = """
/* escape time: a while loop with the bound and the escape test in its condition */
__kernel void escape(__global int *out, int w, int h, int maxit)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float cr = -2.0f + x * (3.0f / w), ci = -1.5f + y * (3.0f / h);
    float zr = 0.0f, zi = 0.0f;
    int n = 0;
    while (n < maxit && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        n++;
    }
    out[y * w + x] = n;
}

/* the escape test as a break, the counter read after the loop */
__kernel void escape_break(__global int *out, int maxit)
{
    int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    float cr = -2.0f + x * (3.0f / w), ci = -1.5f + y * (3.0f / get_global_size(1));
    float zr = 0.0f, zi = 0.0f;
    int n;
    for (n = 0; n < maxit; n++) {
        if (zr * zr + zi * zi >= 4.0f)
            break;
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
    }
    out[y * w + x] = n;
}

/* Newton's square root: a do-while, a load before it, a store inside it */
__kernel void newton(__global const float *a, __global float *steps, __global float *out,
                     int maxit)
{
    int i = get_global_id(0);
    float v = a[i], x = v;
    int it = 0;
    do {
        x = 0.5f * (x + v / x);
        it++;
        steps[i] = (float)it;
    } while (fabs(x * x - v) > 1e-4f * v && it < maxit);
    out[i] = x;
}

/* integers, a continue, a uniform load in the loop */
__kernel void collatz(__global const int *limit, __global int *out)
{
    int i = get_global_id(0) + get_global_id(1) * get_global_size(0)
          + get_global_id(2) * get_global_size(0) * get_global_size(1);
    uint v = i + 1;
    int steps = 0, odd = 0;
    while (v != 1 && steps < limit[0]) {
        steps++;
        if ((v & 1) == 0) {
            v >>= 1;
            continue;
        }
        odd++;
        v = 3 * v + 1;
    }
    out[i] = steps * 1000 + odd;
}

/* a loop reading an element consecutive along x at each step, under a varying guard */
__kernel void walk(__global const float *a, __global float *out, int n, float limit)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float s = 0.0f;
    int k = 0;
    while (s < limit && k < 64) {
        s += a[i] * (k + 1);
        k++;
    }
    out[i] = s + k;
}

/* the loop inside a guard block with a store after it, and a reduction over a barrier */
__kernel void guarded(__global float *out, __global int *sums, int w, int h, int maxit)
{
    __local int counts[64];
    int x = get_global_id(0), y = get_global_id(1);
    int l = get_local_id(1) * get_local_size(0) + get_local_id(0);
    float acc = -1.0f;
    int n = 0;
    if (x < w && y < h) {
        float cr = -2.0f + x * (3.0f / w), ci = -1.5f + y * (3.0f / h), zr = 0.0f, zi = 0.0f;
        if (x % 3 != 0)
            while (n < maxit && zr * zr + zi * zi < 4.0f) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                n++;
            }
        acc = n;
    }
    out[y * get_global_size(0) + x] = acc;
    counts[l] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 32; s > 0; s >>= 1) {
        if (l < s)
            counts[l] += counts[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        sums[get_group_id(1) * get_num_groups(0) + get_group_id(0)] = counts[0];
}

/* complex arithmetic through helpers that only compute */
inline float2 cmul(float2 a, float2 b) { return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline float cabs2(float2 a) { return a.x * a.x + a.y * a.y; }
float bump(__global float *p) { p[0] += 1.0f; return p[0]; }

__kernel void complex_escape(__global int *out, int maxit)
{
    int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    float2 c = (float2)(-2.0f + x * (3.0f / w), -1.5f + y * (3.0f / get_global_size(1)));
    float2 z = (float2)(0.0f, 0.0f);
    int n = 0;
    while (n < maxit && cabs2(z) < 4.0f) {
        z = cmul(z, z) + c;
        n++;
    }
    out[y * w + x] = n;
}

__kernel void touching(__global float *p, __global int *out)
{
    int i = get_global_id(0), n = 0;
    while (n < i % 7 && bump(p) > 0.0f)
        n++;
    out[i] = n;
}

/* a binary search, masked: its gather a[mid] follows no counter; then a loop that stays */
__kernel void search(__global const float *a, __global int *out, int n)
{
    int i = get_global_id(0);
    float key = a[i];
    int lo = 0, hi = n;
    while (lo < hi) {               /* a gather: a[mid] */
        int mid = (lo + hi) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    int c = 0;
    for (int k = 0; k < lo; k++)    /* a loop in a loop, its trip count varying */
        for (int j = 0; j < k % 3; j++)
            c += j;
    out[i] = lo + c;
}

/* steps unrolled by hand in a short counted loop, four lanes of float4 per work-item */
__kernel void quads(__global float4 *out, float scale, int maxit, int width)
{
    int tid = get_global_id(0), i = tid % (width / 4), j = tid / (width / 4);
    float4 x0 = (float4)(4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3) * scale - 2.0f;
    float4 y0 = (float4)(j * scale - 1.5f);
    float4 x = x0, y = y0, x2 = x * x, y2 = y * y;
    int4 stay = (x2 + y2) <= 4.0f, count = 0;
    for (int it = 0; (stay.x | stay.y | stay.z | stay.w) && it < maxit; it += 4) {
        for (int u = 0; u < 4; u++) {
            y = 2 * x * y + y0;
            x = x2 - y2 + x0;
            x2 = x * x;
            y2 = y * y;
        }
        stay = (x2 + y2) <= 4.0f;
        count += stay * 4;
    }
    out[tid] = convert_float4(count);
}

/* complex numbers as a struct: its context arrays field-major, its copies whole */
typedef struct { float re, im; } cplx;
cplx cplx_mul(cplx a, cplx b) {
    cplx r;
    r.re = a.re * b.re - a.im * b.im;
    r.im = a.re * b.im + a.im * b.re;
    return r;
}
__kernel void struct_escape(__global int *out, __global float2 *last, int maxit)
{
    int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    cplx c = {-2.0f + x * (3.0f / w), -1.5f + y * (3.0f / get_global_size(1))};
    cplx z = {0.0f, 0.0f};
    int n = 0;
    while (n < maxit && z.re * z.re + z.im * z.im < 4.0f) {
        cplx sq = cplx_mul(z, z);
        z.re = sq.re + c.re;
        z.im = sq.im + c.im;
        n++;
    }
    cplx copy = z;
    out[y * w + x] = n;
    last[y * w + x] = (float2)(copy.re, copy.im);
}

/* Newton's method on a polynomial: an inner Horner loop over coefficients every work-item
   reads alike runs in lock step inside the masked steps */
__kernel void horner_newton(__global const float *coef, __global float *out, int ncoef,
                            int maxit)
{
    int i = get_global_id(0);
    float x = 0.5f + i * (1.0f / get_global_size(0));
    int it = 0;
    float p;
    do {
        float dp = 0.0f;
        p = 0.0f;
        for (int j = 0; j < ncoef; j++) {
            dp = dp * x + p;
            p = p * x + coef[j];
        }
        x -= p / dp;
        it++;
    } while (fabs(p) > 1e-5f && it < maxit);
    out[i] = it < maxit ? x : -1.0f;
}

/* a varying loop inside a loop that runs at group level: an interchanged loop over the rows
   of a column, and a barrier loop over tiles */
__kernel void in_rows(__global const float *data, __global float *out, int rows, int w)
{
    int i = get_global_id(0);
    float total = 0.0f;
    for (int r = 0; r < rows; r++) {
        float x = data[r * w + i];
        int n = 0;
        while (x > 1.0f && n < 40) {
            x = 0.5f * x + 0.25f / x;
            n++;
        }
        total += x + n;
    }
    out[i] = total;
}

__kernel void in_tiles(__global const float *data, __global float *out, __local float *tile,
                       int w)
{
    int i = get_global_id(0), l = get_local_id(0), ls = get_local_size(0);
    float acc = 0.0f;
    for (int t = 0; t < 4; t++) {
        tile[l] = data[t * w + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        float x = tile[(l + 1) % ls] * 8.0f;
        int n = 0;
        do {
            if (x <= 1.0f)
                break;
            x = 0.5f * x + 0.25f / x;
        } while (++n < 30);
        acc += x + n;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[i] = acc;
}

/* the same inside a varying branch: the rows loop is formed twice (all lanes active, some),
   and its varying loop stays in the work-item loop of both copies */
__kernel void in_guarded_rows(__global const float *data, __global float *out, int w)
{
    int i = get_global_id(0);
    float total = 0.0f;
    if (data[i] > 300.0f) {
        int m = 0;
        float y = data[i];
        while (m < 3 && y > 500.0f) {
            y *= 0.75f;
            m++;
        }
        total = m;
        for (int r = 0; r < 4; r++) {
            float x = data[r * w + i];
            int n = 0;
            for (int k = 0; x > 1.0f && k < 40; k++) {
                x = 0.5f * x + 0.25f / x;
                n++;
            }
            total += x + n;
        }
    }
    out[i] = total;
}

/* each work-item sums its own run of a CSR matrix: the loop stays in the work-item loop */
__kernel void csr_rows(__global const int *rows, __global const int *cols,
                       __global const float *vals, __global const float *x, __global float *y)
{
    int r = get_global_id(0);
    float s = 0.0f;
    for (int k = rows[r]; k < rows[r + 1]; k++)
        s += vals[k] * x[cols[k]];
    y[r] = s;
}

/* vector state across the masked loop's regions: float2, float3 and int2 context arrays read
   and written a component at a time in the loop, and as whole vectors, several components
   at once and by compound assignment outside it */
__kernel void vector_state(__global float4 *out, __global int2 *counts, int maxit)
{
    int i = get_global_id(0);
    float2 c = (float2)(-2.0f + i * (2.5f / get_global_size(0)), 0.25f), z = (float2)(0.0f);
    float3 acc = (float3)(i, 0.5f, -1.0f);
    int2 k = (int2)(0, i);
    while (k.x < maxit && z.x * z.x + z.y * z.y < 4.0f) {
        z = (float2)(z.x * z.x - z.y * z.y, 2.0f * z.x * z.y) + c;
        acc.y += z.x;
        k.x++;
    }
    acc += (float3)(z, 1.0f);
    k += (int2)(1, 2);
    out[i] = (float4)(acc.zy, z.yx);
    counts[i] = k;
}
"""

PLANS = [
    ("escape", (16, 16, 1), ["for loop at <source>:11:5: masked lock step"]),  # while -> for
    ("escape_break", (64, 1, 1), ["for loop at <source>:27:5: masked lock step"]),
    ("newton", (32, 1, 1), ["do loop at <source>:44:5: masked lock step"]),
    ("collatz", (8, 2, 2), ["while loop at <source>:59:5: masked lock step"]),
    ("walk", (64, 1, 1), ["for loop at <source>:79:5: masked lock step"]),
    ("search", (64, 1, 1), [
        "while loop at <source>:149:5: masked lock step",
        "for loop at <source>:157:5: plain in work-item loop 5 (no interchange: its trip count "
        "is not the same for the work-items that reach it; not masked: a loop in its body that "
        "is neither a short counted loop nor one running in lock step (its trip count is not "
        "the same for the work-items that reach it)"]),
    ("escape", (4, 4, 1), ["not masked: local size along x under 8"]),
    ("guarded", (16, 4, 1), ["for loop at <source>:97:13: masked lock step"]),
    ("complex_escape", (32, 1, 1), ["masked lock step"]),
    ("quads", (64, 1, 1), ["for loop at <source>:171:5: masked lock step"]),
    ("complex_escape", (32, 1, 1), [
        "context array z: component-major (its components are used one at a time)"]),
    ("vector_state", (64, 1, 1), ["masked lock step", "context array z: component-major",
                                  "context array k: component-major"]),
    ("csr_rows", (64, 1, 1), [
        "not masked: a memory access in it follows its counter 'k', a run of its own for each "
        "work-item"]),
    ("struct_escape", (16, 4, 1), [
        "masked lock step",
        "context array z: component-major (its fields are all of one scalar type)"]),
    ("horner_newton", (64, 1, 1), ["do loop at <source>:218:5: masked lock step",
                                   "for loop at <source>:221:9: interchange"]),
    ("in_rows", (64, 1, 1), ["interchange", "masked lock step"]),
    ("in_tiles", (32, 1, 1), ["lock step", "masked lock step"]),
    ("in_guarded_rows", (32, 1, 1), [
        "masked lock step", "interchange",
        "not masked: inside a loop that runs at group level under a mask"]),
    ("touching", (32, 1, 1), ["not masked: it calls a function that touches memory, an atomic "
                              "or printf"]),
]


def _plans(name: str, local: tuple[int, int, int], options: str = "") -> str:
    return plan_text(SOURCE, name, local, options)


@pytest.mark.parametrize("name, local, wanted", PLANS)
def test_plans_say_which_loops_run_masked_and_why_others_stay(
        name: str, local: tuple[int, int, int], wanted: list[str]) -> None:
    text = _plans(name, local)
    for line in wanted:
        assert line in text, (line, text)


def test_the_build_option_keeps_varying_loops_in_the_work_item_loop() -> None:
    assert "masked lock step" in _plans("escape", (16, 16, 1))
    assert "masked lock step" not in _plans("escape", (16, 16, 1), "-ppcl-no-masked-loops")


@pytest.fixture(scope="module")
def context() -> cl.Context:
    return cl.Context([cl.get_platforms()[0].get_devices()[0]])


def _run(ctx: cl.Context, options: str, name: str, gsize: tuple[int, ...],
         lsize: tuple[int, ...] | None, arrays: list[np.ndarray],
         scalars: tuple[Any, ...]) -> list[np.ndarray]:
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build(options=options)
    buffers = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    getattr(prg, name)(queue, gsize, lsize, *buffers, *scalars)
    out = [np.empty_like(a) for a in arrays]
    for host, buffer in zip(out, buffers, strict=True):
        cl.enqueue_copy(queue, host, buffer)
    return out


def _both(ctx: cl.Context, *args: Any) -> list[np.ndarray]:
    """The results with masked loops, checked equal to those without."""
    got = _run(ctx, "", *args)
    without = _run(ctx, "-ppcl-no-masked-loops", *args)
    for a, b in zip(got, without, strict=True):
        np.testing.assert_array_equal(a, b)
    return got


def _escape_reference(w: int, h: int, maxit: int) -> np.ndarray:
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    cr = (np.float32(-2.0) + x.astype(np.float32) * np.float32(3.0 / w)).astype(np.float32)
    ci = (np.float32(-1.5) + y.astype(np.float32) * np.float32(3.0 / h)).astype(np.float32)
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    n = np.zeros(cr.shape, np.int32)
    live = np.ones(cr.shape, bool)
    for _ in range(maxit):
        live &= zr * zr + zi * zi < 4.0
        t = zr * zr - zi * zi + cr
        zi = np.where(live, 2.0 * zr * zi + ci, zi).astype(np.float32)
        zr = np.where(live, t, zr).astype(np.float32)
        n += live
    return n


@pytest.mark.parametrize("w, h, local", [(64, 48, (16, 16)), (64, 32, (64, 1)),
                                         (60, 20, (8, 4)), (64, 64, None)])
def test_escape_time_equals_the_build_without_and_numpy(context, w: int, h: int,
                                                        local: tuple[int, int] | None) -> None:
    gw = -(-w // local[0]) * local[0] if local else w
    gh = -(-h // local[1]) * local[1] if local else h
    out = np.full(gw * gh, -1, np.int32)
    got = _both(context, "escape", (gw, gh), local, [out],
                (np.int32(w), np.int32(h), np.int32(50)))[0]
    want = _escape_reference(w, h, 50)
    # rows of w elements; the guard leaves the rest; rounding may move a point on the edge of
    # escaping between numpy's float32 and the kernel's contracted arithmetic
    inside = got[:w * h].reshape(h, w)
    assert np.mean(inside == want) > 0.99
    assert (got[w * h:] == -1).all()


@pytest.mark.parametrize("gsize, local", [((64, 16), (64, 1)), ((32, 32), (16, 8)),
                                          ((24, 8), (24, 2))])
def test_a_break_in_the_loop_equals_the_build_without(context, gsize, local) -> None:
    out = np.zeros(gsize[0] * gsize[1], np.int32)
    got = _both(context, "escape_break", gsize, local, [out], (np.int32(40),))[0]
    assert got.min() >= 1 and got.max() == 40


@pytest.mark.parametrize("n, local", [(256, (32,)), (1000, (8,)), (512, None)])
def test_newton_stores_each_step_and_converges(context, n: int, local) -> None:
    rng = np.random.default_rng(n)
    a = (rng.random(n) * 1000 + 0.5).astype(np.float32)
    steps, out = np.zeros(n, np.float32), np.zeros(n, np.float32)
    got_steps, got = _both(context, "newton", (n,), local, [a, steps, out], (np.int32(30),))[1:]
    np.testing.assert_allclose(got, np.sqrt(a), rtol=1e-4)
    assert got_steps.min() >= 1 and got_steps.max() <= 30 and len(np.unique(got_steps)) > 1


def _collatz(i: int, limit: int) -> int:
    v, steps, odd = i + 1, 0, 0
    while v != 1 and steps < limit:
        steps += 1
        if v % 2 == 0:
            v //= 2
            continue
        odd += 1
        v = (3 * v + 1) & 0xFFFFFFFF
    return steps * 1000 + odd


@pytest.mark.parametrize("gsize, local", [((512,), (64,)), ((16, 8, 4), (8, 2, 2)),
                                          ((40, 3), (8, 1))])
def test_collatz_with_continue_equals_python(context, gsize, local) -> None:
    total = int(np.prod(gsize))
    limit = np.array([200], np.int32)
    got = _both(context, "collatz", gsize, local, [limit, np.zeros(total, np.int32)], ())[1]
    assert got.tolist() == [_collatz(i, 200) for i in range(total)]


@pytest.mark.parametrize("n, local", [(1000, (64,)), (96, (32,))])
def test_a_loop_reading_along_x_under_a_guard(context, n: int, local) -> None:
    rng = np.random.default_rng(3)
    a = rng.random(n).astype(np.float32)
    gn = -(-n // local[0]) * local[0]
    out = np.full(gn, -1.0, np.float32)
    got = _both(context, "walk", (gn,), local, [a, out], (np.int32(n), np.float32(5.0)))[1]
    want = np.empty(n, np.float32)
    for i in range(n):
        s, k = np.float32(0.0), 0
        while s < 5.0 and k < 64:
            s = np.float32(s + a[i] * np.float32(k + 1))
            k += 1
        want[i] = s + k
    # a device may contract s + a[i] * (k + 1) into one rounding (OpenCL allows it)
    np.testing.assert_allclose(got[:n], want, rtol=1e-6)
    assert (got[n:] == -1.0).all()


def test_a_grid_stride_loop_keeps_its_own_plan() -> None:
    text = plan_text("""
__kernel void total(__global const float *a, __global float *out, int n)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = a[i] * a[i];
}""", "total", (64, 1, 1))
    assert "grid-stride in lock step" in text, text
    assert "not masked: a grid-stride loop" in text, text


@pytest.mark.parametrize("w, h", [(64, 16), (50, 13)])
def test_a_loop_in_a_guard_block_beside_a_barrier_reduction(context, w: int, h: int) -> None:
    gw, gh = -(-w // 16) * 16, -(-h // 4) * 4
    out = np.zeros(gw * gh, np.float32)
    sums = np.zeros((gw // 16) * (gh // 4), np.int32)
    got, got_sums = _both(context, "guarded", (gw, gh), (16, 4), [out, sums],
                          (np.int32(w), np.int32(h), np.int32(60)))
    grid = got.reshape(gh, gw)
    want = _escape_reference(w, h, 60).astype(np.float32)
    want[:, ::3] = 0.0  # x % 3 == 0 skips the loop
    assert np.mean(grid[:h, :w] == want) > 0.99
    assert (grid[h:, :] == -1.0).all() and (grid[:, w:] == -1.0).all()
    counts = np.where(grid < 0, 0, grid).astype(np.int64)
    blocks = counts.reshape(gh // 4, 4, gw // 16, 16).sum(axis=(1, 3)).ravel()
    np.testing.assert_array_equal(got_sums, blocks)


def test_only_helpers_that_compute_from_their_values_may_be_called() -> None:
    module = compile_source(SOURCE).module
    assert arithmetic_helpers(module) == frozenset({"cmul", "cabs2", "cplx_mul"})


@pytest.mark.parametrize("gsize, local", [((64, 32), (32, 1)), ((48, 16), (16, 4))])
def test_complex_escape_through_helpers_equals_the_build_without(context, gsize, local) -> None:
    out = np.zeros(gsize[0] * gsize[1], np.int32)
    got = _both(context, "complex_escape", gsize, local, [out], (np.int32(40),))[0]
    want = _escape_reference(gsize[0], gsize[1], 40)
    assert np.mean(got.reshape(gsize[1], gsize[0]) == want) > 0.99


def test_a_temporary_of_the_loop_body_stays_a_local_in_both_copies_of_the_loop() -> None:
    """The loop's body runs in the masked steps and again in the rest its last lanes run
    alone: each copy declares the body's ``t``, so no value of it crosses regions and it is
    no context array (the recurrence's ``zr``, ``zi`` and ``n`` are)."""
    module = compile_source(SOURCE).module
    formed = kernel_ir(module, "escape", KernelSpec((16, 16, 1)), parse_build_options("")).formed
    assert formed is not None
    assert {"zr", "zi", "n"} <= set(formed.context_vars)
    assert "t" not in formed.context_vars


@pytest.mark.parametrize("width, local", [(256, (64,)), (128, (16,))])
def test_a_short_counted_loop_inside_equals_the_build_without(context, width: int, local) -> None:
    n = width // 4 * 64
    out = np.zeros(4 * n, np.float32)
    got = _both(context, "quads", (n,), local, [out],
                (np.float32(3.0 / width), np.int32(64), np.int32(width)))[0]
    # a vector comparison is -1 where true: each step of four counts -4
    assert got.max() <= 0 and got.min() >= -64 and len(np.unique(got)) > 4


OTHERS = """
__constant float WEIGHTS[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
float weighted(float x, int k) { return x * WEIGHTS[k & 3]; }
float squares(float x) { float t[2] = {x, x * x}; return t[0] + t[1]; }

__kernel void effects(__global float *a, __global int *count, __global float *out, float limit)
{
    int i = get_global_id(0);
    float s = a[i];
    int n = 0;
    while (s < limit && n < 50) {    /* an atomic in the old spelling */
        atom_inc(&count[0]);
        s += 0.5f;
        n++;
    }
    int m = 0;
    while (s > 0.0f && m < 50) {     /* a fence */
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        s -= 1.0f;
        m++;
    }
    int k = 0;
    while (s < limit && k < 50) {    /* a helper reading a program-scope table */
        s += weighted(1.0f, k);
        k++;
    }
    out[i] = s + n + m + k + squares(s);
}
"""


def test_effects_by_family_and_helpers_reading_tables_keep_a_loop_in_the_work_item_loop() -> None:
    assert arithmetic_helpers(compile_source(OTHERS).module) == frozenset({"squares"})
    text = plan_text(OTHERS, "effects", (32, 1, 1))
    assert "masked lock step" not in text, text
    assert text.count("not masked: it calls a function that touches memory, an atomic or "
                      "printf") == 2, text
    # the small helper is inlined before formation: its table read is the loop's own
    assert "not masked: it indexes an array (private, __local or a program-scope table)" \
        in text, text


@pytest.mark.parametrize("n, local", [(256, (64,)), (96, (32,)), (64, (16,))])
def test_vector_context_arrays_component_major_equal_the_build_without(context, n: int,
                                                                        local) -> None:
    """A ``float2`` context array laid out component-major (``z[2][work-items]``) vectorizes
    the masked steps; whole-vector reads, writes and compound assignments outside the loop
    are composed from and split into its components."""
    out = np.zeros((n, 4), np.float32)
    counts = np.zeros((n, 2), np.int32)
    got, got_counts = _both(context, "vector_state", (n,), local, [out, counts],
                            (np.int32(30),))
    assert (got_counts[:, 1] == np.arange(n) + 2).all()
    assert (got_counts[:, 0] >= 1).all() and (got_counts[:, 0] <= 31).all()
    assert (got[:, 0] == 0.0).all()  # acc.z = -1 + 1


@pytest.mark.parametrize("n, local", [(256, (64,)), (96, (32,)), (80, (16,))])
def test_a_binary_search_gathering_in_lock_step_equals_numpy(context, n: int, local) -> None:
    """The masked steps gather ``a[mid]`` across the lanes (1M keys in 4M sorted floats on 2
    cores: 100 -> 20 ms); the positions equal numpy's ``searchsorted``, and the counting loop
    after it (left in the work-item loop) equals Python's."""
    a = np.sort(np.random.default_rng(n).random(n).astype(np.float32))
    out = np.full(n, -1, np.int32)
    got = _both(context, "search", (n,), local, [a, out], (np.int32(n),))[1]
    lo = np.searchsorted(a, a)
    want = [int(low) + sum(j for k in range(int(low)) for j in range(k % 3)) for low in lo]
    np.testing.assert_array_equal(got, np.array(want, np.int32))


@pytest.mark.parametrize("gsize, local", [((64, 32), (32, 1)), ((48, 16), (16, 4))])
def test_struct_state_field_major_equals_the_build_without_and_numpy(context, gsize,
                                                                      local) -> None:
    """``struct { float re, im; }`` context arrays laid out field-major: the escape counts
    equal the build without masked loops (whose structs stay AoS) and numpy's, and so do the
    last values, read back through a whole-struct copy."""
    out = np.zeros(gsize[0] * gsize[1], np.int32)
    last = np.zeros((gsize[0] * gsize[1], 2), np.float32)
    got, got_last = _both(context, "struct_escape", gsize, local, [out, last], (np.int32(40),))
    want = _escape_reference(gsize[0], gsize[1], 40)
    assert np.mean(got.reshape(gsize[1], gsize[0]) == want) > 0.99
    assert np.isfinite(got_last).all() and got_last.any()


@pytest.mark.parametrize("n, local", [(256, (64,)), (96, (32,)), (48, (16,))])
def test_an_inner_loop_in_lock_step_inside_the_masked_steps_equals_the_build_without(
        context, n: int, local) -> None:
    """The Horner loop runs at group level inside each masked step (its counter uniform: a
    variable declared in the varying loop's body lives one iteration), and again as written in
    the rest the last lanes run alone (its counter a local of its own there). The roots of
    x^11 - 2 equal the build without masked loops, and numpy's root within float rounding."""
    coef = np.zeros(12, np.float32)
    coef[0], coef[-1] = 1.0, -2.0
    out = np.zeros(n, np.float32)
    got = _both(context, "horner_newton", (n,), local, [coef, out],
                (np.int32(coef.size), np.int32(200)))[1]
    # every work-item converged (from 0.5 the first step overshoots: up to 60 steps)
    np.testing.assert_allclose(got, 2.0 ** (1.0 / 11.0), rtol=1e-5)


@pytest.mark.parametrize("w, local", [(256, (64,)), (96, (32,)), (80, (16,))])
def test_varying_loops_inside_group_level_loops_equal_the_build_without(context, w: int,
                                                                        local) -> None:
    """A varying loop inside an interchanged loop and inside a barrier loop runs masked in
    each of their iterations; both kernels equal the build without masked loops and a Python
    model of them. Inside a varying branch the interchanged loop is formed twice and its
    varying loop stays (a generated program found it forming the two copies apart)."""
    data = (np.random.default_rng(w).random(4 * w) * 1000).astype(np.float32)
    out = np.zeros(w, np.float32)
    rows = _both(context, "in_rows", (w,), local, [data, out], (np.int32(4), np.int32(w)))[1]
    guarded = _both(context, "in_guarded_rows", (w,), local, [data, np.zeros(w, np.float32)],
                    (np.int32(w),))[1]
    runs = np.zeros(w, np.float32)
    y = data[:w].copy()
    for _ in range(3):
        step = y > 500.0
        runs += step
        y = np.where(step, y * np.float32(0.75), y)
    np.testing.assert_allclose(guarded, np.where(data[:w] > 300.0, rows + runs, 0.0),
                               rtol=1e-6)
    tiles = _both(context, "in_tiles", (w,), local, [data, np.zeros(w, np.float32)],
                  (cl.LocalMemory(local[0] * 4), np.int32(w)))[1]

    def settle(x: np.float32, limit: int) -> tuple[np.float32, int]:
        n = 0
        while n < limit and x > 1.0:
            x = np.float32(np.float32(0.5) * x + np.float32(0.25) / x)
            n += 1
        return x, n

    for i in range(0, w, 7):
        total = np.float32(0.0)
        for r in range(4):
            x, n = settle(data[r * w + i], 40)
            total = np.float32(total + np.float32(x + np.float32(n)))
        assert np.isclose(rows[i], total, rtol=1e-5), i
        ls = local[0]
        base, lane = i - i % ls, i % ls
        acc = np.float32(0.0)
        for t in range(4):
            x, n = settle(np.float32(data[t * w + base + (lane + 1) % ls] * np.float32(8.0)),
                          30)
            acc = np.float32(acc + np.float32(x + np.float32(n)))
        assert np.isclose(tiles[i], acc, rtol=1e-5), i


STEPPED_COMPONENTS = """
__kernel void k(__global int2 *out, int maxit)
{
    int i = get_global_id(0);
    int2 k = (int2)(0, i);
    float x = i * 0.37f;
    while (k.x < maxit && x > 0.5f) {
        x *= 0.9f;
        k.xy++;
    }
    out[i] = k;
}
"""


def test_a_vector_stepped_several_components_at_once_keeps_its_layout(context) -> None:
    """Component-major, ``k.xy++`` would step a compound literal composed of the components,
    a C lvalue whose stores are lost, and the counts stayed 0: a vector written other than
    whole or a component at a time keeps its layout, and the counts equal Python's."""
    plans = plan_text(STEPPED_COMPONENTS, "k", (32, 1, 1))
    assert "masked lock step" in plans and "component-major" not in plans, plans
    queue = cl.CommandQueue(context)
    got = []
    for options in ("", "-ppcl-no-masked-loops"):
        out = np.zeros((64, 2), np.int32)
        buf = cl.Buffer(context, mf.READ_WRITE, out.nbytes)
        cl.Program(context, STEPPED_COMPONENTS).build(options=options).k(
            queue, (64,), (32,), buf, np.int32(40))
        cl.enqueue_copy(queue, out, buf)
        got.append(out)
    want = []
    for i in range(64):
        steps, x = 0, np.float32(np.float32(i) * np.float32(0.37))
        while steps < 40 and x > 0.5:
            x = np.float32(x * np.float32(0.9))
            steps += 1
        want.append([steps, i + steps])
    np.testing.assert_array_equal(got[0], np.array(want, np.int32))
    np.testing.assert_array_equal(got[1], got[0])

