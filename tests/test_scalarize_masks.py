"""Vector comparisons, masks and pointer-cast vector accesses split into scalars
(``transforms/scalarize.py``): a region calling an element-wise builtin on vectors is split
into one scalar per component, and these constructs used to keep the whole region as vector
code (a BlackScholes from patterns on ``float8`` with ``select`` ran 2.7x slower). Every kernel
is checked against numpy, with the split shown in the C source and the plans."""

from __future__ import annotations

import numpy as np
import pytest
from launch import build_kernel, plan_text, run

MASKS = """
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o,
                __global int4 *m, __global int *flags)
{
    int i = get_global_id(0);
    float4 x = a[i], y = b[i];
    int4 gt = x > y;
    int4 both = (x > 0.0f) && (y < 0.5f);
    int4 either = (x < -0.5f) || !(y != y);
    float4 s = select(fmin(x, y), x - y, gt);
    float4 t = any(both) ? s * 2.0f : s;
    o[i] = t + (both ? x : y);
    m[i] = (gt & both) | (either ^ ~isgreater(x, y)) | (isnan(y) & 16) | (signbit(x) & 32);
    flags[i] = any(gt) + 2 * all(either);
}
"""


def _masks_reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    minus = np.int32(-1)
    gt = np.where(a > b, minus, 0).astype(np.int32)
    both = np.where((a > 0) & (b < 0.5), minus, 0).astype(np.int32)
    either = np.where((a < -0.5) | ~(b != b), minus, 0).astype(np.int32)
    s = np.where(gt < 0, a - b, np.fmin(a, b))
    t = np.where((both < 0).any(axis=1)[:, None], s * np.float32(2.0), s)
    o = t + np.where(both < 0, a, b)
    isgt = np.where(np.greater(a, b), minus, 0).astype(np.int32)
    isnan = np.where(np.isnan(b), minus, 0).astype(np.int32)
    sign = np.where(np.signbit(a), minus, 0).astype(np.int32)
    m = (gt & both) | (either ^ ~isgt) | (isnan & 16) | (sign & 32)
    flags = (gt < 0).any(axis=1).astype(np.int32) + 2 * (either < 0).all(axis=1)
    return o.astype(np.float32), m, flags.astype(np.int32)


def test_comparisons_selects_and_masks_are_split_into_scalars() -> None:
    k = build_kernel(MASKS, "k", local_size=(32,))
    assert "ppcl_u_gt__s0" in k.c_source and "ppcl_u_x__s3" in k.c_source
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (96, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (96, 4)).astype(np.float32)
    a[::7, 1] = b[::7, 1]  # equal components
    b[3, 2] = b[17, 0] = np.nan
    a[5, 3] = -0.0
    a[:4] = np.abs(a[:4]) + np.float32(0.1)  # rows where both hold in every component
    b[:4] = -2.0
    o = np.zeros_like(a)
    m = np.zeros((96, 4), np.int32)
    flags = np.zeros(96, np.int32)
    run(MASKS, "k", (96,), (32,), a, b, o, m, flags)
    want_o, want_m, want_flags = _masks_reference(a, b)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(flags, want_flags)
    assert "scalarize: vectors of a work-item loop split into scalars (it calls fmin on " \
        "vectors)" in plan_text(MASKS, "k", (32, 1, 1))


DOUBLE_SELECT = """
__kernel void k(__global const double2 *a, __global const uint4 *c, __global double2 *o,
                __global uint4 *u)
{
    int i = get_global_id(0);
    double2 x = a[i];
    long2 neg = x < 0.0;
    o[i] = select(sqrt(fabs(x)), -x, neg) + (double2)(neg.x, neg.y);
    uint4 w = c[i];
    u[i] = select(w, ~w, w) + (uint4)(neg.x ? 1u : 2u) + max(w, (uint4)(7u));
}
"""


def test_long_masks_of_doubles_and_unsigned_conditions() -> None:
    """A ``double2`` comparison gives ``long2`` -1/0; ``select`` on ``uint4`` tests the top
    bit of each component, which is not its sign."""
    k = build_kernel(DOUBLE_SELECT, "k", local_size=(16,))
    assert "ppcl_u_neg__s1" in k.c_source and "ppcl_u_w__s3" in k.c_source
    rng = np.random.default_rng(12)
    a = rng.uniform(-4, 4, (64, 2))
    a[0] = (0.0, -0.0)
    c = rng.integers(0, 2**32, (64, 4), dtype=np.uint64).astype(np.uint32)
    c[1] = (0x80000000, 0x7FFFFFFF, 0, 0xFFFFFFFF)
    o = np.zeros_like(a)
    u = np.zeros_like(c)
    run(DOUBLE_SELECT, "k", (64,), (16,), a, c, o, u)
    neg = np.where(a < 0, -1, 0)
    np.testing.assert_array_equal(o, np.where(neg < 0, -a, np.sqrt(np.abs(a))) + neg)
    top = (c & np.uint32(0x80000000)) != 0
    picked = np.where(top, ~c, c)
    want = picked + np.where(neg[:, :1] < 0, np.uint32(1), np.uint32(2)) \
        + np.maximum(c, np.uint32(7))
    np.testing.assert_array_equal(u, want.astype(np.uint32))


POINTER_CAST = """
__kernel void k(__global const float *a, __global float *o, __global const float *b)
{
    int i = get_global_id(0);
    float8 v = *(__global const float8 *)&a[8 * i];
    float4 w = *(__global const float4 *)(b + 4 * i);
    *(__global float8 *)&o[8 * i] = exp(-0.5f * v * v) + (float8)(w, w.s3210);
}
"""


@pytest.mark.parametrize("n", [8, 40])
def test_vectors_read_and_written_through_cast_pointers_are_split(n: int) -> None:
    """``*(float8 *)&a[8 * i]``: each component is ``a[8 * i + k]``."""
    k = build_kernel(POINTER_CAST, "k", local_size=(8,))
    assert "ppcl_u_v__s7" in k.c_source
    rng = np.random.default_rng(13)
    a = rng.uniform(-2, 2, 8 * n).astype(np.float32)
    b = rng.uniform(-2, 2, 4 * n).astype(np.float32)
    o = np.zeros_like(a)
    run(POINTER_CAST, "k", (n,), (8,), a, o, b)
    v = a.reshape(n, 8).astype(np.float64)
    w = b.reshape(n, 4)
    want = np.exp(-0.5 * v * v) + np.concatenate([w, w[:, ::-1]], axis=1)
    np.testing.assert_allclose(o.reshape(n, 8), want, rtol=2e-6, atol=1e-6)


ESCAPE4 = """
__kernel void k(__global const float4 *c, __global int4 *o, int limit)
{
    int t = get_global_id(0);
    float4 cr = c[t] * 3.0f - 2.0f, ci = c[t].wzyx * 3.0f - 1.5f;
    float4 zr = cr, zi = ci;
    int4 alive = (int4)(-1), count = (int4)(0);
    for (int it = 0; it < limit && any(alive); it++) {
        float4 zr2 = zr * zr, zi2 = zi * zi;
        zi = 2.0f * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        alive &= zr2 + zi2 < 4.0f;
        alive ^= (int4)(0) | (zr2 != zr2);
        count -= alive;
    }
    o[t] = count;
}
"""


def test_a_mask_updated_with_and_in_a_masked_loop_is_split() -> None:
    """Four escape times a work-item under an ``int4`` mask while ``any`` lane lives: the loop
    runs under the group's mask and its vectors are split; the counts are those of the build
    keeping the vectors (``-ppcl-no-scalarize``)."""
    assert "scalarize: vectors of a work-item loop split into scalars (inside a group-level " \
        "loop)" in plan_text(ESCAPE4, "k", (16, 1, 1))
    assert "scalarize: off (build option -ppcl-no-scalarize)" in plan_text(
        ESCAPE4, "k", (16, 1, 1), options="-ppcl-no-scalarize")
    c = np.random.default_rng(14).random((80, 4), dtype=np.float32)
    split, kept = (np.zeros((80, 4), np.int32) for _ in range(2))
    run(ESCAPE4, "k", (80,), (16,), c, split, np.int32(100))
    run(ESCAPE4, "k", (80,), (16,), c, kept, np.int32(100), options="-ppcl-no-scalarize")
    np.testing.assert_array_equal(split, kept)
    assert split.max() == 100 and len(np.unique(split)) > 10


NARROW = """
__kernel void k(__global const uchar4 *a, __global const uchar4 *b, __global uchar4 *o,
                __global int4 *m, __global const short4 *c, __global short4 *p,
                __global const ushort4 *d, __global ushort4 *q)
{
    int i = get_global_id(0);
    uchar4 x = a[i], y = b[i];
    uchar4 s = (x + y) / (uchar4)(2);
    uchar4 t = (~x) / (uchar4)(3);
    o[i] = max(s, t) ^ (x & y);
    m[i] = convert_int4((x ^ y) > (uchar4)(100)) + (int4)(any(~x > y));
    short4 z = c[i];
    p[i] = (-z * (short4)(3) - z) / (short4)(7) + max(z, (short4)(-5)).s3210;
    ushort4 w = d[i];
    q[i] = w * w / (ushort4)(5) + (ushort4)(1);
}
"""


def test_char_and_short_components_wrap_as_vector_lanes_do() -> None:
    """C computes a ``uchar`` or ``short`` component in ``int``: split naively, ``(x + y) / 2``
    of two ``uchar4`` components kept the carry a ``uchar4`` lane drops, and ``~x`` was
    negative. The split's operations are converted back to the element type."""
    k = build_kernel(NARROW, "k", local_size=(16,))
    assert "ppcl_u_x__s3" in k.c_source and "ppcl_u_w__s3" in k.c_source
    rng = np.random.default_rng(15)
    a, b = (rng.integers(0, 256, (64, 4), dtype=np.uint8) for _ in range(2))
    c = rng.integers(-2**15, 2**15, (64, 4), dtype=np.int16)
    c[0] = (-2**15, 2**15 - 1, -1, 0)
    d = rng.integers(0, 2**16, (64, 4), dtype=np.uint16)
    d[0] = (65535, 65534, 256, 255)
    outs = {}
    for options in ("", "-ppcl-no-scalarize"):
        o, p, q = np.zeros_like(a), np.zeros_like(c), np.zeros_like(d)
        m = np.zeros((64, 4), np.int32)
        run(NARROW, "k", (64,), (16,), a, b, o, m, c, p, d, q, options=options)
        outs[options] = (o, m, p, q)
    for split, kept in zip(outs[""], outs["-ppcl-no-scalarize"], strict=True):
        np.testing.assert_array_equal(split, kept)
    x, y = a.astype(np.int64), b.astype(np.int64)
    s, t = ((x + y) & 255) // 2, (255 - x) // 3
    np.testing.assert_array_equal(outs[""][0], (np.maximum(s, t) ^ (x & y)).astype(np.uint8))
    w = d.astype(np.int64)
    np.testing.assert_array_equal(outs[""][3], ((w * w & 0xFFFF) // 5 + 1).astype(np.uint16))


SHIFTS = """
__kernel void k(__global const uchar4 *a, __global const char4 *b, __global const int4 *c,
                __global uchar4 *o, __global char4 *p, __global int4 *q)
{
    int i = get_global_id(0);
    uchar4 x = a[i];
    char4 y = b[i];
    int4 z = c[i];
    uchar4 counts = x.wzyx;
    o[i] = max((x << counts) / (uchar4)(3), x >> (uchar4)(9));
    p[i] = min((y << (char4)(2)) >> (char4)(1), y >> convert_char4(counts));
    q[i] = max(z << (z & (int4)(40)), z >> (int4)(33));
}
"""


def _lane_shift(value: np.ndarray, count: np.ndarray, bits: int, left: bool) -> np.ndarray:
    dtype = value.dtype
    count = count.astype(np.int64) & (bits - 1)
    wide = value.astype(np.int64)
    shifted = (wide << count) if left else (wide >> count)
    mask = (1 << bits) - 1
    unsigned = shifted & mask
    return unsigned.astype(np.uint64).astype(dtype) if dtype.kind == "u" else \
        np.where(unsigned >= 1 << (bits - 1), unsigned - (1 << bits), unsigned).astype(dtype)


def test_vector_shifts_take_each_lane_count_modulo_its_width() -> None:
    """``x << counts`` on ``uchar4`` shifts each lane by its count modulo 8, in a lane of 8
    bits; split into scalars, the shift is computed in ``uint`` and converted back."""
    k = build_kernel(SHIFTS, "k", local_size=(16,))
    assert "ppcl_u_x__s3" in k.c_source and "ppcl_u_z__s3" in k.c_source
    rng = np.random.default_rng(16)
    a = rng.integers(0, 256, (32, 4), dtype=np.uint8)
    b = rng.integers(-128, 128, (32, 4), dtype=np.int8)
    c = rng.integers(-2**31, 2**31, (32, 4), dtype=np.int64).astype(np.int32)
    outs = {}
    for options in ("", "-ppcl-no-scalarize"):
        o, p, q = np.zeros_like(a), np.zeros_like(b), np.zeros_like(c)
        run(SHIFTS, "k", (32,), (16,), a, b, c, o, p, q, options=options)
        outs[options] = (o, p, q)
    for split, kept in zip(outs[""], outs["-ppcl-no-scalarize"], strict=True):
        np.testing.assert_array_equal(split, kept)
    counts = a[:, ::-1]
    want_o = np.maximum(_lane_shift(a, counts, 8, True) // 3,
                        _lane_shift(a, np.full_like(a, 9), 8, False))
    np.testing.assert_array_equal(outs[""][0], want_o)
    two = np.full_like(b, 2)
    left = _lane_shift(_lane_shift(b, two, 8, True), np.ones_like(b), 8, False)
    want_p = np.minimum(left, _lane_shift(b, counts.astype(np.int8), 8, False))
    np.testing.assert_array_equal(outs[""][1], want_p)
    want_q = np.maximum(_lane_shift(c, c & 40, 32, True),
                        _lane_shift(c, np.full_like(c, 33), 32, False))
    np.testing.assert_array_equal(outs[""][2], want_q)
