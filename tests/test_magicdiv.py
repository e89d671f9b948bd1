"""Divisions by launch constants as multiplies by magic numbers (``transforms/magicdiv.py``):
the arithmetic against C's division for edge and random operands, the kernels that use it
against numpy and the checking device, the divisions it keeps, and the plans that say so."""

from __future__ import annotations

import io

import numpy as np
import pytest
from launch import run
from oracle import LocalMem, Shape, compare_devices

from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms.magicdiv import (
    magic_divisions,
    narrow_divide,
    signed_divide,
    unsigned_divide,
)
from ppcl.settings import Debug

INT_MIN, INT_MAX, UINT_MAX = -(2 ** 31), 2 ** 31 - 1, 2 ** 32 - 1


def _c_quotient(x: int, d: int) -> tuple[int, int]:
    """C's quotient (truncated toward zero) and remainder."""
    q = abs(x) // abs(d) * (1 if (x < 0) == (d < 0) else -1)
    return q, x - q * d


def _edges(limit: int) -> list[int]:
    near = [1, 2, 3, 5, 6, 7, 641, 0xFFFF, 0x10000, 0x10001, 0x7FFFFFFF, 0x80000000,
            0x80000001, 0xFFFFFFFE, 0xFFFFFFFF]
    powers = [1 << s for s in range(32)]
    return sorted({v for base in near + powers for v in (base - 1, base, base + 1)
                   if 0 < v <= limit})


def test_unsigned_magic_numbers_divide_exactly() -> None:
    rng = np.random.default_rng(1)
    divisors = _edges(UINT_MAX) + [int(v) for v in rng.integers(1, 2 ** 32, 400)] \
        + [int(v) for v in rng.integers(1, 2 ** 12, 200)]
    for d in divisors:
        xs = _edges(UINT_MAX) + [0, d - 1, d, d + 1, UINT_MAX - d, UINT_MAX // d * d,
                                 UINT_MAX // d * d - 1] \
            + [int(v) for v in rng.integers(0, 2 ** 32, 60)]
        for x in xs:
            if 0 <= x <= UINT_MAX:
                assert unsigned_divide(x, d) == divmod(x, d), (x, d)


def test_signed_magic_numbers_divide_exactly_and_truncate() -> None:
    rng = np.random.default_rng(2)
    magnitudes = [v for v in _edges(2 ** 31)] + [int(v) for v in rng.integers(1, 2 ** 31, 300)]
    divisors = sorted({s * v for v in magnitudes for s in (1, -1)
                       if INT_MIN <= s * v <= INT_MAX})
    for d in divisors:
        xs = [s * v for v in _edges(2 ** 31) for s in (1, -1)] \
            + [0, d, -d, d - 1, d + 1, INT_MAX, INT_MIN + 1] \
            + [int(v) for v in rng.integers(INT_MIN, INT_MAX, 40, endpoint=True)]
        for x in xs:
            if INT_MIN <= x <= INT_MAX and not (x == INT_MIN and d == -1):
                assert signed_divide(x, d) == _c_quotient(x, d), (x, d)


def test_narrow_magic_numbers_divide_dividends_below_2_31_exactly() -> None:
    """One multiply and a shift for dividends in [0, 2^31), by any 32-bit divisor: unsigned,
    or signed with the quotient given the divisor's sign."""
    rng = np.random.default_rng(3)
    unsigned = _edges(UINT_MAX) + [int(v) for v in rng.integers(1, 2 ** 32, 400)]
    signed = sorted({s * v for v in _edges(2 ** 31) + [int(v) for v in
                                                       rng.integers(1, 2 ** 31, 200)]
                     for s in (1, -1) if INT_MIN <= s * v <= INT_MAX})
    for d in unsigned + signed:
        xs = [v for v in _edges(INT_MAX) if v <= INT_MAX] + [0, INT_MAX, INT_MAX - 1] \
            + [abs(d) - 1, abs(d), abs(d) + 1, INT_MAX // abs(d) * abs(d)] \
            + [int(v) for v in rng.integers(0, 2 ** 31, 40)]
        for x in xs:
            if not 0 <= x <= INT_MAX:
                continue
            if d > 0:
                assert narrow_divide(x, d) == divmod(x, d), (x, d)
            if d <= INT_MAX:
                assert narrow_divide(x, d, signed=True) == _c_quotient(x, d), (x, d)


def test_zero_divisor_and_the_overflowing_quotient_give_what_the_guarded_operator_gave() -> None:
    """The C dialect divides by 1 where the divisor is 0, and gives ``INT_MIN`` for
    ``INT_MIN / -1``: the magic numbers give the same values."""
    for x in (0, 1, 77, UINT_MAX):
        assert unsigned_divide(x, 0) == (x, 0)
    for x in (INT_MIN, -5, 0, 9, INT_MAX):
        assert signed_divide(x, 0) == (x, 0)
    assert signed_divide(INT_MIN, -1) == (INT_MIN, 0)
    assert narrow_divide(77, 0) == (77, 0) and narrow_divide(77, 0, signed=True) == (77, 0)


ROWS = """
__kernel void rows(__global const int *v, __global int *q, __global int *r,
                   __global uint *uq, __global uint *ur, int width, uint uwidth, int bias)
{
    int gid = get_global_id(0);
    int x = v[gid] + bias;
    q[gid] = x / width;
    r[gid] = x % width;
    uint u = (uint)gid * 2654435761u;
    uq[gid] = u / uwidth;
    ur[gid] = u % uwidth;
}
"""


def _rows_reference(v: np.ndarray, width: int, uwidth: int, bias: int) -> list[np.ndarray]:
    x = v.astype(np.int64) + bias
    q = np.trunc(x / width).astype(np.int64) if width else x
    r = x - q * (width or 1)
    gid = np.arange(len(v), dtype=np.uint64)
    u = (gid * 2654435761) % 2 ** 32
    uq = u // uwidth if uwidth else u
    ur = u % uwidth if uwidth else u * 0
    return [a.astype(t) for a, t in ((q, np.int32), (r, np.int32), (uq, np.uint32),
                                     (ur, np.uint32))]


def test_kernel_divisions_by_arguments_become_multiplies() -> None:
    module = compile_source(ROWS).module
    kernel = module.function("rows")
    assert kernel is not None
    text = print_ir(magic_divisions(kernel).function)
    assert " / width" not in text and " % width" not in text and " / uwidth" not in text
    assert "clz" in text and "(ulong)" in text


@pytest.mark.parametrize(("width", "uwidth"), [
    (7, 7), (1, 1), (-1, 2), (-7, 641), (3, 0x80000000), (INT_MIN, UINT_MAX), (INT_MAX, 3),
    (1000, 1 << 20), (-(1 << 30), 0xFFFF), (0, 0),
])
def test_divisions_by_arguments_match_numpy(width: int, uwidth: int) -> None:
    n = 1000
    rng = np.random.default_rng(abs(width) % 97)
    v = rng.integers(INT_MIN // 2, INT_MAX // 2, n, dtype=np.int32)
    v[:6] = [0, 1, -1, INT_MAX // 2, INT_MIN // 2, 5]
    outs = [np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, np.uint32),
            np.zeros(n, np.uint32)]
    bias = -(2 ** 29)
    run(ROWS, "rows", (n,), (40,), v, *outs, np.int32(width), np.uint32(uwidth),
        np.int32(bias))
    for got, want in zip(outs, _rows_reference(v, width, uwidth, bias)):
        np.testing.assert_array_equal(got, want)


TWO_D = """
__kernel void grid(__global const float *in, __global float *out, int width, int height)
{
    int gid = get_global_id(0);
    int w = width;
    int row = gid / w;
    int col = gid % w;
    if (row >= height) return;
    int left = col > 0 ? col - 1 : col;
    out[gid] = in[row * w + left] + (float)row * 0.5f - (float)col;
}
"""


@pytest.mark.parametrize("width", [1, 3, 16, 37])
def test_a_one_dimensional_launch_over_rows_matches_the_checking_device(width: int) -> None:
    height = 5

    def make_args(shape: Shape, rng: np.random.Generator) -> list[object]:
        n = shape.global_size[0]
        return [rng.random(max(n, width * height)).astype(np.float32),
                np.zeros(n, np.float32), np.int32(width), np.int32(height)]

    shapes = [Shape((width * height,), (width * height,)), Shape((64,), (16,)),
              Shape((67,), (67,))]
    assert compare_devices(TWO_D, "grid", make_args,
                           [s for s in shapes if s.global_size[0] <= width * height + 64])


BUTTERFLY = """
__kernel void butterfly(__global float *t, const int step)
{
    unsigned int tid = get_global_id(0);
    const unsigned int group = tid % step;
    const unsigned int pair = 2 * step * (tid / step) + group;
    const unsigned int match = pair + step;
    float a = t[pair], b = t[match];
    t[pair] = a + b;
    t[match] = a - b;
}
"""


def test_butterfly_steps_of_a_walsh_transform_match_the_checking_device() -> None:
    """The step is a kernel argument converted to ``uint`` at each division."""
    n = 64
    for step in (1, 2, 4, 8, 16, 32):
        def make_args(shape: Shape, rng: np.random.Generator, step: int = step) -> list[object]:
            return [rng.random(n).astype(np.float32), np.int32(step)]
        compare_devices(BUTTERFLY, "butterfly", make_args, [Shape((n // 2,), (8,))])


@pytest.mark.parametrize(("body", "why"), [
    # the divisor varies per work-item
    ("out[i] = x[i] / (i + 1);", "not the same for the whole launch"),
    # the divisor is written after its definition
    ("uint d = w; d += x[0]; out[i] = x[i] / d;", "not the same for the whole launch"),
    # the divisor is read from memory
    ("out[i] = x[i] / x[0];", "not the same for the whole launch"),
    # a 64-bit dividend that may not fit in 32 bits
    ("out[i] = (uint)(((ulong)x[i] << 8) / (ulong)w);", "may not fit in 32 bits"),
    # signed 64-bit
    ("out[i] = (uint)((long)x[i] / (long)w);", "not a 32-bit integer division"),
    # the dividend has an effect
    ("uint k = x[i]; out[i] = k++ / w; out[i] += k;", "its dividend has side effects"),
])
def test_divisions_kept_say_why_and_stay_right(body: str, why: str) -> None:
    source = (f"__kernel void k(__global const uint *x, __global uint *out, uint w) "
              f"{{ uint i = get_global_id(0); {body} }}")
    stream = io.StringIO()
    kernel_ir(compile_source(source).module, "k", KernelSpec((8, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    assert "division kept: " in stream.getvalue() and why in stream.getvalue()
    assert "magic division" not in stream.getvalue()

    def make_args(shape: Shape, rng: np.random.Generator) -> list[object]:
        return [rng.integers(1, 2 ** 32, 16, dtype=np.uint32), np.zeros(16, np.uint32),
                np.uint32(7)]
    compare_devices(source, "k", make_args, [Shape((16,), (8,))])


def test_plans_name_each_division_and_the_magic_numbers_run_once_per_group() -> None:
    stream = io.StringIO()
    value = kernel_ir(compile_source(ROWS).module, "rows", KernelSpec((40, 1, 1)),
                      parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    plans = stream.getvalue()
    for division in ("x / width", "x % width", "u / uwidth", "u % uwidth"):
        assert f"magic division: {division}" in plans
    formed = value.needs_formed("test")
    # the magic numbers are computed at group level, before the work-item loop
    first = formed.body.stmts[0]
    assert type(first).__name__ != "WorkItemLoop"
    names = {name for name in formed.group_scalars}
    assert any(name.startswith("div") and name.endswith("_m") for name in names)


def test_divisor_from_sizes_and_single_definitions_is_hoisted() -> None:
    """``w`` is defined from a range size after a guard: its value at the top of the kernel is
    the one at the division."""
    source = """
    __kernel void k(__global uint *out, uint n) {
        uint i = get_global_id(0);
        if (i >= n) return;
        uint w = get_global_size(0) / 4 + 1;
        out[i] = i / w + (i % w) * 1000;
    }
    """
    stream = io.StringIO()
    kernel_ir(compile_source(source).module, "k", KernelSpec((16, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    assert "magic division: i / w" in stream.getvalue()
    out = np.zeros(64, np.uint32)
    run(source, "k", (64,), (16,), out, np.uint32(60))
    i = np.arange(60, dtype=np.uint32)
    np.testing.assert_array_equal(out[:60], i // 17 + (i % 17) * 1000)
    assert not out[60:].any()


SIZE_T_ROWS = """
__kernel void rows(__global ulong *q, __global ulong *r, ulong wide, int width)
{
    int row = get_global_id(0) / width;
    int col = get_global_id(0) % width;
    size_t i = get_global_id(0);
    q[i] = (ulong)((uint)i * 3u) / wide + (ulong)row * 1000;
    r[i] = (ulong)((uint)i * 3u) % wide + (ulong)col * 1000;
}
"""


@pytest.mark.parametrize(("wide", "width"), [
    (7, 7), (1, 1), (2 ** 32 - 1, 3), (2 ** 32, 5), (2 ** 32 + 1, 100), (2 ** 63, 1000),
    (2 ** 64 - 1, 33), (0, 0), (2 ** 32 + 7, -3),
])
def test_size_t_divisions_of_ids_and_32_bit_values(wide: int, width: int) -> None:
    """``get_global_id(0) / width`` divides in ``size_t``: the id fits in 32 bits, the divisor
    (a negative ``width`` converted) may not."""
    stream = io.StringIO()
    kernel_ir(compile_source(SIZE_T_ROWS).module, "rows", KernelSpec((32, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    assert stream.getvalue().count("magic division") == 4
    n = 640
    q, r = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    run(SIZE_T_ROWS, "rows", (n,), (32,), q, r, np.uint64(wide), np.int32(width))
    i = np.arange(n, dtype=object)
    d = width % 2 ** 64 or 1
    x = i * 3
    want_q = [(a // wide if wide else a) + (b // d) % 2 ** 32 * 1000 for a, b in zip(x, i)]
    want_r = [(a % wide if wide else 0) + ((b % d) % 2 ** 32) * 1000 for a, b in zip(x, i)]
    np.testing.assert_array_equal(q, np.array(want_q, dtype=np.uint64))
    np.testing.assert_array_equal(r, np.array(want_r, dtype=np.uint64))


def test_compound_assignments_to_a_variable() -> None:
    source = """
    __kernel void k(__global int *out, int w) {
        int i = get_global_id(0);
        int a = i - 50, b = i - 50;
        a /= w;
        b %= w;
        out[i] = a * 1000 + b;
    }
    """
    stream = io.StringIO()
    kernel_ir(compile_source(source).module, "k", KernelSpec((20, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    assert stream.getvalue().count("magic division") == 2
    for w in (3, -7, 1, INT_MIN):
        out = np.zeros(100, np.int32)
        run(source, "k", (100,), (20,), out, np.int32(w))
        want = [_c_quotient(i - 50, w) for i in range(100)]
        np.testing.assert_array_equal(out, [q * 1000 + r for q, r in want])


MASKED = """
__kernel void masked(__global const uint *x, __global uint *q, __global uint *r,
                     __global int *sq, __global int *sr, uint w, int sw)
{
    int i = get_global_id(0);
    uint u = x[i] & 0x7fffffffu;
    int s = (int)(x[i] & 0x7fffffffu);
    q[i] = u / w;
    r[i] = u % w;
    sq[i] = s / sw;
    sr[i] = s % sw;
}
"""


@pytest.mark.parametrize("d", [1, 2, 3, 7, 641, 0x7FFFFFFF, 0x80000000, 0x80000001,
                               0xFFFFFFFF, 0xFFFFFFFE, 12345678])
def test_dividends_below_2_31_take_one_multiply_and_a_shift(d: int) -> None:
    stream = io.StringIO()
    kernel_ir(compile_source(MASKED).module, "masked", KernelSpec((32, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    assert stream.getvalue().count("one multiply and a shift") == 4
    rng = np.random.default_rng(d % 1000)
    x = rng.integers(0, 2 ** 32, 512, dtype=np.uint64).astype(np.uint32)
    x[:8] = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, d & 0xFFFFFFFF, (d - 1) & 0x7FFFFFFF]
    outs = [np.zeros(512, np.uint32), np.zeros(512, np.uint32), np.zeros(512, np.int32),
            np.zeros(512, np.int32)]
    sd = int(np.uint32(d).view(np.int32))
    run(MASKED, "masked", (512,), (32,), x, *outs, np.uint32(d), np.int32(sd))
    masked = [int(v) & 0x7FFFFFFF for v in x]
    np.testing.assert_array_equal(outs[0], [v // d for v in masked])
    np.testing.assert_array_equal(outs[1], [v % d for v in masked])
    np.testing.assert_array_equal(outs[2], [_c_quotient(v, sd)[0] for v in masked])
    np.testing.assert_array_equal(outs[3], [_c_quotient(v, sd)[1] for v in masked])


BARRIER = """
__kernel void tiles(__global const int *in, __global int *out, __local int *tile, int w,
                    int n)
{
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    if (gid >= n) return;
    tile[lid] = in[gid] / w;
    barrier(CLK_LOCAL_MEM_FENCE);
    int other = tile[(lid + 1) % get_local_size(0)];
    out[gid] = other * 1000 + gid % w + (in[gid] % w);
}
"""


def test_magic_numbers_of_a_kernel_with_a_barrier_and_an_exit() -> None:
    """Formation runs the magic numbers at group level before the regions a barrier cuts and
    the masks an early return needs."""
    def make_args(shape: Shape, rng: np.random.Generator) -> list[object]:
        n = shape.global_size[0]
        return [rng.integers(-10 ** 6, 10 ** 6, n, dtype=np.int32), np.zeros(n, np.int32),
                LocalMem(4 * shape.local_size[0]), np.int32(-7), np.int32(n)]

    assert compare_devices(BARRIER, "tiles", make_args, [Shape((64,), (16,)),
                                                         Shape((96,), (32,))])


WRAPS = """
__kernel void ring(__global const int *x, __global int *out, int w)
{
    int i = get_global_id(0);
    out[i] = x[(i - 1 + w) % w] + x[(i + 1) % w] + i % w;
}
"""


def test_periodic_wraps_are_left_to_the_split_and_a_plain_remainder_is_not() -> None:
    """``(i - 1 + w) % w`` and ``(i + 1) % w`` are the wraps the split drops on the interior
    (a multiply-high would hide them from it); ``i % w`` has no offset and becomes one."""
    stream = io.StringIO()
    kernel_ir(compile_source(WRAPS).module, "ring", KernelSpec((8, 1, 1)),
              parse_build_options(""), Debug(frozenset({"plans"})), stream=stream)
    text = stream.getvalue()
    assert text.count("(a periodic wrap: left to the split") == 2, text
    assert text.count("magic division: ") == 1, text

    def make_args(shape: Shape, rng: np.random.Generator) -> list[object]:
        return [rng.integers(-99, 99, 24, dtype=np.int32), np.zeros(24, np.int32),
                np.int32(24)]
    compare_devices(WRAPS, "ring", make_args, [Shape((24,), (8,))])
