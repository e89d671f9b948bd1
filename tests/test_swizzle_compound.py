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
    queue = cl.CommandQueue(ctx)
    out = np.zeros(10, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    n = 33
    cl.Program(ctx, src).build().k(queue, (1,), None, buf, np.int32(3), np.int32(0),
                                   np.int32(n))
    cl.enqueue_copy(queue, out, buf)
    # v.z / 0 and v.y % 0 are unspecified; the others are defined
    int_min = -(1 << 31)
    want = [100 // 3, 400 % 3, 1 << (n % 32), int_min, 1 >> (n % 32), 1 >> (n % 32),
            1 << (n % 8), 1 << (8 % 8), 64 >> (n % 8), 64 >> (15 % 8)]
    assert out.tolist() == want
