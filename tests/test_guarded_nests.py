"""Loop nests after a guard that ends some work-items (``if (x >= w) return;``, or the same
guard written as a block): in a group whose work-items all pass it, every loop of the nest that
the work-items reach alike moves out of the work-item loop (``_Former._uniform``), and a value
computed from ids and the nest's counters (``int row = (y + r) * w + x;``) is computed again
where it is read instead of kept per work-item (``context._steady_in_scopes``), so the
innermost work-item loop reads consecutive words. Checked on filters and reductions written
for these tests: the plans, three spellings of the guard getting the same plan, and results
against numpy at sizes that leave partial groups, with and without input space splitting."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from tests.launch import plan_text

mf = cl.mem_flags

BOX = """
__kernel void box_return(__global const float *src, __global float *dst, int w, int h, int k)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w - k + 1 || y >= h - k + 1)
        return;
    float acc = 0.0f;
    for (int dy = 0; dy < k; dy++) {
        int base = (y + dy) * w + x;
        for (int dx = 0; dx < k; dx++)
            acc += src[base + dx];
    }
    dst[y * w + x] = acc;
}

__kernel void box_block(__global const float *src, __global float *dst, int w, int h, int k)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < w - k + 1 && y < h - k + 1) {
        float acc = 0.0f;
        for (int dy = 0; dy < k; dy++) {
            int base = (y + dy) * w + x;
            for (int dx = 0; dx < k; dx++)
                acc += src[base + dx];
        }
        dst[y * w + x] = acc;
    }
}

__kernel void box_while(__global const float *src, __global float *dst, int w, int h, int k)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w - k + 1) return;
    if (y >= h - k + 1) return;
    float acc = 0.0f;
    int dy = 0;
    while (dy < k) {
        const int base = (y + dy) * w + x;
        int dx = 0;
        while (dx < k) {
            acc += src[base + dx];
            dx++;
        }
        dy++;
    }
    dst[y * w + x] = acc;
}

/* the counter moves between the declaration and the use: not computed again */
__kernel void stepped(__global const float *src, __global float *dst, int n, int m)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float acc = 0.0f;
    int j = 0;
    while (j < m) {
        int at = j * n + i;
        j++;
        for (int t = 0; t < 2; t++)
            acc += src[at] * (float)(t + j);
    }
    dst[i] = acc;
}

/* a branch that varies inside the outer loop: the nest runs under masks instead */
__kernel void branchy(__global const float *src, __global float *dst, int n, int m)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < m; j++) {
        int at = j * n + i;
        if (src[at] > 0.5f) {
            for (int t = 0; t < 3; t++)
                acc += src[at] + t;
        }
    }
    dst[i] = acc;
}
"""


def _box(src: np.ndarray, w: int, h: int, k: int) -> np.ndarray:
    img = src.reshape(h, w).astype(np.float64)
    out = np.zeros((h, w))
    for dy in range(k):
        for dx in range(k):
            out[:h - k + 1, :w - k + 1] += img[dy:dy + h - k + 1, dx:dx + w - k + 1]
    return out


@pytest.mark.parametrize("name", ["box_return", "box_block", "box_while"])
def test_the_nest_after_a_guard_moves_out_and_its_row_is_computed_again(name: str) -> None:
    text = plan_text(BOX, name, (16, 4, 1))
    loops = [line for line in text.splitlines() if "loop at" in line and "interchange" in line]
    assert len(loops) == 2, text
    assert "'base' recomputed in each region that reads it" in text, text
    assert "masked lock step" not in text, text


def test_a_counter_that_moves_where_the_value_is_used_keeps_it_per_work_item() -> None:
    assert "recomputed" not in plan_text(BOX, "stepped", (32, 1, 1))


@pytest.mark.parametrize("options", ["", "-ppcl-no-split"])
@pytest.mark.parametrize("name", ["box_return", "box_block", "box_while"])
@pytest.mark.parametrize("w, h, k, local", [
    (37, 23, 3, None),     # partial groups along x and y
    (64, 32, 5, (16, 4)),  # whole groups, a few edge groups failing the guard
    (19, 40, 1, (8, 8)),   # one-tap filter
])
def test_filters_after_a_guard_match_numpy(name: str, options: str, w: int, h: int, k: int,
                                           local: tuple[int, int] | None) -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, BOX).build(options)
    rng = np.random.default_rng(w * h + k)
    src = rng.random(w * h, dtype=np.float32)
    dst = np.full(w * h, -1.0, np.float32)
    src_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    dst_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=dst)
    gx = w if local is None else -(-w // local[0]) * local[0]
    gy = h if local is None else -(-h // local[1]) * local[1]
    getattr(prg, name)(queue, (gx, gy), local, src_buf, dst_buf, np.int32(w), np.int32(h),
                       np.int32(k))
    cl.enqueue_copy(queue, dst, dst_buf)
    want = _box(src, w, h, k)
    got = dst.reshape(h, w)
    inside = (slice(0, h - k + 1), slice(0, w - k + 1))
    np.testing.assert_allclose(got[inside], want[inside], rtol=1e-5)
    outside = np.ones((h, w), bool)
    outside[inside] = False
    assert (got[outside] == -1.0).all()


@pytest.mark.parametrize("options", ["", "-ppcl-no-split"])
@pytest.mark.parametrize("n, m", [(100, 3), (256, 4), (7, 1)])
def test_moving_counters_and_varying_branches_after_a_guard_match_numpy(
        options: str, n: int, m: int) -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, BOX).build(options)
    rng = np.random.default_rng(n + m)
    src = rng.random(n * m, dtype=np.float32)
    src_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    out = np.zeros(n, np.float32)
    out_buf = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    grid = -(-n // 32) * 32
    table = src.reshape(m, n).astype(np.float64)

    prg.stepped(queue, (grid,), (32,), src_buf, out_buf, np.int32(n), np.int32(m))
    cl.enqueue_copy(queue, out, out_buf)
    want = sum(table[j] * ((j + 1) + (j + 2)) for j in range(m))
    np.testing.assert_allclose(out, want, rtol=1e-5)

    prg.branchy(queue, (grid,), (32,), src_buf, out_buf, np.int32(n), np.int32(m))
    cl.enqueue_copy(queue, out, out_buf)
    want = sum(np.where(table[j] > 0.5, 3 * table[j] + 3, 0.0) for j in range(m))
    np.testing.assert_allclose(out, want, rtol=1e-5)
