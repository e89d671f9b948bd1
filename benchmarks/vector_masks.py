"""Kernels written with OpenCL vectors, comparisons and masks, on ppcl's CPU device with and
without splitting their vectors into scalars (``-ppcl-no-scalarize``), beside pocl.

A region calling an element-wise builtin on vectors is split into one scalar per component
so that its work-item loop vectorizes across work-items (``transforms/scalarize.py``). Vector
comparisons, ``select``, ``?:`` on a vector condition, ``any``/``all``, the relational
builtins and vectors read through cast pointers used to keep the whole region as vector code.
The change was developed on the ``float8`` BlackScholes that ``ppcl.patterns`` derives; the
five kernels here were written afterwards, in the shape of vendors' vectorized GPU samples: a
``float4`` BlackScholes whose cumulative normal picks a side with ``select``, a Mandelbrot set
four pixels a work-item escaping under an ``int4`` mask while ``any`` lane is alive, a soft
threshold with ``isgreater`` and a vector ``?:``, a ray-box slab test with ``all``, and a leaky
activation on ``float8`` read and written through cast pointers. Columns timed in turns, min
and median; the two ppcl builds must agree exactly, pocl on 95% of the elements (contracted
arithmetic moves an escape by a step here and there).

    python3 -m benchmarks.vector_masks [--only NAME[,NAME]] [--repeats N]
"""

from __future__ import annotations

from benchmarks.pass_ab import N, main
from benchmarks.varying_loops import mostly_equal

KERNELS: dict[str, tuple[str, tuple[int, ...]]] = {
    "black_scholes4": ("""
float4 normal_cdf(float4 d) {
    float4 k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float4 poly = k * (0.319381530f + k * (-0.356563782f + k * (1.781477937f
                  + k * (-1.821255978f + k * 1.330274429f))));
    float4 tail = 0.398942280f * exp(-0.5f * d * d) * poly;
    return select(tail, 1.0f - tail, d > 0.0f);
}
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o) {
    int i = get_global_id(0);
    float4 r = a[i], u = b[i];
    float4 s = 10.0f + 90.0f * r, x = 10.0f + 90.0f * u, t = 0.5f + 9.5f * r * u;
    float4 v = 0.1f + 0.2f * u;
    float4 root = sqrt(t);
    float4 d1 = (log(s / x) + (0.03f + 0.5f * v * v) * t) / (v * root);
    float4 d2 = d1 - v * root;
    o[i] = s * normal_cdf(d1) - x * exp(-0.03f * t) * normal_cdf(d2);
}""", (N // 4,)),
    "mandelbrot4": ("""
__kernel void k(__global const float *a, __global const float *b, __global float4 *o) {
    int t = get_global_id(0), w = 1024;
    int col = (4 * t) % w, row = (4 * t) / w;
    float4 cr = -2.0f + (3.0f / w) * (float4)(col, col + 1, col + 2, col + 3);
    float4 ci = (float4)(-1.5f + (3.0f / w) * row);
    float4 zr = cr, zi = ci;
    int4 alive = (int4)(-1), count = (int4)(0);
    for (int it = 0; it < 256 && any(alive); it++) {
        float4 zr2 = zr * zr, zi2 = zi * zi;
        zi = 2.0f * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        alive &= zr2 + zi2 < 4.0f;
        count -= alive;
    }
    o[t] = convert_float4(count);
}""", (N // 4,)),
    "threshold4": ("""
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o) {
    int i = get_global_id(0);
    float4 v = a[i], w = b[i];
    int4 high = isgreater(v, w);
    float4 soft = fmin(exp(v - w), (float4)(2.0f));
    float4 picked = high ? soft : 0.5f * v;
    o[i] = (v < 0.1f || w > 0.9f) ? (float4)(0.0f) : picked;
}""", (N // 4,)),
    "slab4": ("""
__kernel void k(__global const float4 *a, __global const float4 *b, __global float *o) {
    int i = get_global_id(0);
    float4 origin = a[i] * 2.0f - 1.0f, dir = b[i] - 0.5f;
    float4 inv = 1.0f / dir;
    float4 t0 = (-0.5f - origin) * inv, t1 = (0.5f - origin) * inv;
    float4 near = fmin(t0, t1), far = fmax(t0, t1);
    float enter = fmax(fmax(near.x, near.y), near.z);
    float leave = fmin(fmin(far.x, far.y), far.z);
    int4 ok = isfinite(inv) && (far >= 0.0f);
    o[i] = (all(ok.xyz) && enter <= leave) ? enter : -1.0f;
}""", (N // 4,)),
    "leaky8": ("""
__kernel void k(__global const float *a, __global const float *b, __global float *o) {
    int i = get_global_id(0);
    float8 x = *(__global const float8 *)&a[8 * i] - 0.5f;
    float8 g = *(__global const float8 *)&b[8 * i];
    float8 y = select(x, 0.01f * x, x < 0.0f) * (1.0f / (1.0f + exp(-g)));
    *(__global float8 *)&o[8 * i] = y;
}""", (N // 8,)),
}


if __name__ == "__main__":
    main(KERNELS, "-ppcl-no-scalarize", "scalarized", __doc__.splitlines()[0],
         agree=mostly_equal)
