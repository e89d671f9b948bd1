"""Choices on the data in kernels that scatter their stores, as sorting networks write them,
on ppcl's CPU device with the selects pass and without it (``-ppcl-no-selects``), beside pocl.

Four one-kernel programs over 1M random floats: a bitonic compare-and-swap written with
``if``/``else`` stores, with ``?:`` and with ``select``, and the AMD sample's spelling (the
greater and the lesser chosen into variables) storing each pair at a permuted place. None was written
for the pass. The three columns are timed in turns (``ppcl.timing.measure_in_turns``), min
and median of ``--repeats`` rounds; every result is compared with pocl's when pocl is there,
and the two ppcl builds must agree exactly.

    python3 -m benchmarks.branch_free [--only NAME[,NAME]] [--repeats N]
"""

from __future__ import annotations

from benchmarks.pass_ab import N, main

KERNELS: dict[str, tuple[str, tuple[int, ...]]] = {
    "bitonic_if": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        if ((x > y) == ((i & 256u) == 0)) { o[i] = y; o[ixj] = x; }
        else { o[i] = x; o[ixj] = y; }
    }
}""", (N,)),
    "bitonic_conditional": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        int swap = (x > y) == ((i & 256u) == 0);
        o[i] = swap ? y : x;
        o[ixj] = swap ? x : y;
    }
}""", (N,)),
    "bitonic_select": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    uint i = get_global_id(0), ixj = i ^ 64u;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        int swap = (x > y) == ((i & 256u) == 0);
        o[i] = select(x, y, swap);
        o[ixj] = select(y, x, swap);
    }
}""", (N,)),
    "order_through_table": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int i = get_global_id(0);
    float l = a[2 * i], r = a[2 * i + 1], greater, lesser;
    if (l > r) { greater = l; lesser = r; } else { greater = r; lesser = l; }
    int to = (int)(((uint)i * 7919u) % (uint)(N / 2));  /* a permutation of the pairs */
    o[2 * to] = lesser;
    o[2 * to + 1] = greater;
}""".replace("N / 2", str(N // 2)), (N // 2,)),
}


if __name__ == "__main__":
    main(KERNELS, "-ppcl-no-selects", "branch-free", __doc__.splitlines()[0])
