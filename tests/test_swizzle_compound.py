"""A compound assignment to a swizzle of several components (``v.xz /= d``, ``v.xz <<= n``)
on the CPU device computes as the operator does elsewhere: a zero divisor gives an unspecified
value, never a trap, and a shift count is taken modulo the element's width, as OpenCL C
defines them."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl


@pytest.fixture(scope="module")
def ctx() -> cl.Context:
    return cl.create_some_context(interactive=False)


def _one_work_item(ctx: cl.Context, src: str, count: int, *args: np.int32) -> list[int]:
    """The ``count`` ints kernel ``k`` of ``src`` writes to its first argument, run once."""
    queue = cl.CommandQueue(ctx)
    out = np.zeros(count, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    cl.Program(ctx, src).build().k(queue, (1,), None, buf, *args)
    cl.enqueue_copy(queue, out, buf)
    return list(out.tolist())


def test_swizzle_division_and_shifts_follow_opencl(ctx: cl.Context) -> None:
    src = """
    __kernel void k(__global int *o, int d, int z, int n)
    {
        int4 v = (int4)(100, 200, 300, 400);
        v.xz /= (int2)(d, z);
        v.yw %= (int2)(z, d);
        int4 s = (int4)(1, 1, 1, 1);
        s.xy <<= (int2)(n, -1);
        s.zw >>= (int2)(n, n);
        char4 c = (char4)(1, 1, 64, 64);
        c.xy <<= (char2)(n, 8);
        c.zw >>= (char2)(n, 15);
        o[0] = v.x; o[1] = v.w; o[2] = s.x; o[3] = s.y; o[4] = s.z; o[5] = s.w;
        o[6] = c.x; o[7] = c.y; o[8] = c.z; o[9] = c.w;
    }
    """
    n = 33
    out = _one_work_item(ctx, src, 10, np.int32(3), np.int32(0), np.int32(n))
    # v.z / 0 and v.y % 0 are unspecified; the others are defined
    int_min = -(1 << 31)
    want = [100 // 3, 400 % 3, 1 << (n % 32), int_min, 1 >> (n % 32), 1 >> (n % 32),
            1 << (n % 8), 1 << (8 % 8), 64 >> (n % 8), 64 >> (15 % 8)]
    assert out == want


def test_increment_and_decrement_of_several_components(ctx: cl.Context) -> None:
    """``v.yxwz++``, ``++k.zw``, ``s.yx--`` and ``--b.xyw``: C has no lvalue for several
    components of a vector, and the generated C was rejected at the first launch; each is now
    the store of the stepped components, a postfix step giving the value before it (uchar
    components wrap). CUDA steps them through its reference to the lanes."""
    src = """
    __kernel void k(__global int *o, int i)
    {
        int4 k = (int4)(0, i, 2 * i, -i);
        uchar4 b = (uchar4)(i, 255, 3, 0);
        short2 s = (short2)(i, -i);
        int4 a = k.yxwz++;
        int2 c = ++k.zw;
        short2 d = s.yx--;
        --b.xyw;
        b.zy++;
        int2 e = convert_int2(--s.xy);
        o[0] = k.x; o[1] = k.y; o[2] = k.z; o[3] = k.w;
        o[4] = a.x; o[5] = a.y; o[6] = a.z; o[7] = a.w;
        o[8] = c.x; o[9] = c.y; o[10] = d.x; o[11] = d.y; o[12] = e.x; o[13] = e.y;
        o[14] = b.x; o[15] = b.y; o[16] = b.z; o[17] = b.w;
    }
    """
    i = 5
    out = _one_work_item(ctx, src, 18, np.int32(i))
    # k.yxwz++ reads (i, 0, -i, 2i) and steps every component; ++k.zw steps z and w again
    k = [1, i + 1, 2 * i + 2, -i + 2]
    want = k + [i, 0, -i, 2 * i] + [2 * i + 2, -i + 2] + [-i, i] + [i - 2, -i - 2]
    want += [i - 1, 255, 4, 255]  # (i, 255, 3, 0): x, y, w down (0 wraps), then z, y up
    assert out == want
