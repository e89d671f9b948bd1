"""Short loops over private arrays and ``__constant`` tables, as GPU-style kernels write them, on
ppcl's CPU device with the unroll pass and without it (``-ppcl-no-unroll``), beside pocl.

Ten one-kernel programs: records of four per work-item (contiguous and coalesced), a private
histogram, a 9-tap filter with its taps in a ``__constant`` argument and in a program-scope
table, a 3x3 filter with its weights in a private two-dimensional array, a 3x3 transform of points, a 4-neighbour stencil through offset tables, a sorting
network over a private array and a polynomial from a coefficient table. None was written for
the pass. The three columns are timed in turns (``ppcl.timing.measure_in_turns``), min and
median of ``--repeats`` rounds; every result is compared with pocl's when pocl is there, and the
two ppcl builds must agree exactly.

    python3 -m benchmarks.short_loops [--only NAME[,NAME]] [--repeats N]
"""

from __future__ import annotations

from benchmarks.pass_ab import N, main

# name: (source, global size)
KERNELS: dict[str, tuple[str, tuple[int, ...]]] = {
    "record4": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int base = get_global_id(0) * 4;
    float v[4];
    for (int i = 0; i < 4; i++) v[i] = a[base + i] * b[base + i];
    for (int i = 0; i < 4; i++) o[base + i] = v[i] + v[3 - i];
}""", (N // 4,)),
    "coalesced4": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0), n = get_global_size(0);
    float v[4];
    for (int i = 0; i < 4; i++) v[i] = a[g + i * n] * b[g + i * n];
    for (int i = 0; i < 4; i++) o[g + i * n] = v[i] + v[3 - i];
}""", (N // 4,)),
    "histogram8": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0);
    int h[8] = {0};
    for (int j = 0; j < 16; j++) h[((int)(a[g * 16 + j] * 8.0f)) & 7]++;
    float s = 0.0f;
    for (int i = 0; i < 8; i++) s += h[i] * (float)i;
    o[g] = s;
}""", (N // 16,)),
    "taps_argument": ("""
__kernel void k(__global const float *a, __constant float *w, __global float *o) {
    int g = get_global_id(0);
    float s = 0.0f;
    for (int t = 0; t < 9; t++) s += a[g + t] * w[t];
    o[g] = s;
}""", (N - 16,)),
    "taps_table": ("""
__constant float W[9] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.4f, 0.3f, 0.2f, 0.1f};
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0);
    float s = 0.0f;
    #pragma unroll
    for (int t = 0; t < 9; t++) s += a[g + t] * W[t];
    o[g] = s;
}""", (N - 16,)),
    "filter3x3_private": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int x = get_global_id(0) + 1, y = get_global_id(1) + 1, w = get_global_size(0) + 2;
    float kk[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
    float s = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += kk[j + 1][i + 1] * a[(y + j) * w + x + i];
    o[y * w + x] = s / 16.0f;
}""", (1022, 1022)),
    "transform3": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0);
    float m[9];
    for (int i = 0; i < 9; i++) m[i] = b[i];
    float x = a[3 * g], y = a[3 * g + 1], z = a[3 * g + 2];
    o[3 * g] = m[0] * x + m[1] * y + m[2] * z;
    o[3 * g + 1] = m[3] * x + m[4] * y + m[5] * z;
    o[3 * g + 2] = m[6] * x + m[7] * y + m[8] * z;
}""", (N // 3,)),
    "offset_tables": ("""
__constant int DX[4] = {1, -1, 0, 0};
__constant int DY[4] = {0, 0, 1, -1};
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int x = get_global_id(0) + 1, y = get_global_id(1) + 1, w = get_global_size(0) + 2;
    float s = 0.0f;
    for (int d = 0; d < 4; d++) s += a[(y + DY[d]) * w + x + DX[d]];
    o[y * w + x] = s * 0.25f - a[y * w + x];
}""", (1022, 1022)),
    "sorting_network8": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0), n = get_global_size(0);
    float v[8];
    for (int i = 0; i < 8; i++) v[i] = a[g + i * n];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 7; j++) {
            float lo = fmin(v[j], v[j + 1]), hi = fmax(v[j], v[j + 1]);
            v[j] = lo;
            v[j + 1] = hi;
        }
    for (int i = 0; i < 8; i++) o[g + i * n] = v[i];
}""", (N // 8,)),
    "polynomial_table": ("""
__constant float C[6] = {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f};
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int g = get_global_id(0);
    float x = a[g], s = 0.0f, p = 1.0f;
    for (int i = 0; i < 6; i++) { s += C[i] * p; p *= x; }
    o[g] = s;
}""", (N,)),
}


if __name__ == "__main__":
    main(KERNELS, "-ppcl-no-unroll", "unrolled", __doc__.splitlines()[0])
