"""Matrix-vector products in both traversal orders: atax, bicg, mvt, gesummv.

One work-item per output element walks a whole row (consecutive work-items read addresses a row
apart) or a whole column (consecutive work-items read consecutive addresses), the way the GPU
versions of these kernels are written. 1D work-groups of 256, or the runtime's choice."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

ATAX_SOURCE = """
__kernel void atax_kernel1(__global float *A, __global float *x, __global float *tmp,
                           int nx, int ny)
{
    int i = get_global_id(0);

    if (i < nx) {
        tmp[i] = 0;
        for (int j = 0; j < ny; j++) {
            tmp[i] += A[i * ny + j] * x[j];
        }
    }
}

__kernel void atax_kernel2(__global float *A, __global float *y, __global float *tmp,
                           int nx, int ny)
{
    int j = get_global_id(0);

    if (j < ny) {
        y[j] = 0;
        for (int i = 0; i < nx; i++) {
            y[j] += A[i * ny + j] * tmp[i];
        }
    }
}
"""


def _atax_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    nx, ny = size["nx"], size["ny"]
    return {
        "A": rng.random((nx, ny), dtype=np.float32) - 0.5,
        "x": rng.random(ny, dtype=np.float32),
        "y": np.zeros(ny, dtype=np.float32),
        "tmp": np.zeros(nx, dtype=np.float32),
    }


def _atax_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    nx, ny = data.size["nx"], data.size["ny"]
    buf = data.buf
    data.kernel("atax_kernel1")(queue, (round_up(nx, 256),), (256,),
                                buf["A"], buf["x"], buf["tmp"], np.int32(nx), np.int32(ny))
    data.kernel("atax_kernel2")(queue, (round_up(ny, 256),), (256,),
                                buf["A"], buf["y"], buf["tmp"], np.int32(nx), np.int32(ny))
    return data.read(queue, "y")


def _atax_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    return (a.T @ (a @ inputs["x"].astype(np.float64)),)


ATAX = Program(
    name="atax", summary="y = A^T (A x): a row walk, then a column walk",
    source=ATAX_SOURCE,
    sizes={"small": {"nx": 300, "ny": 260}, "default": {"nx": 4000, "ny": 4000}},
    inputs=_atax_inputs, run=_atax_run, reference=_atax_reference, tolerance=1e-3)


BICG_SOURCE = """
__kernel void bicg_kernel1(__global float *A, __global float *r, __global float *s,
                           int nx, int ny)
{
    int j = get_global_id(0);

    if (j < ny) {
        s[j] = 0.0;
        for (int i = 0; i < nx; i++) {
            s[j] += r[i] * A[i * ny + j];
        }
    }
}

__kernel void bicg_kernel2(__global float *A, __global float *p, __global float *q,
                           int nx, int ny)
{
    int i = get_global_id(0);

    if (i < nx) {
        q[i] = 0.0;
        for (int j = 0; j < ny; j++) {
            q[i] += A[i * ny + j] * p[j];
        }
    }
}
"""


def _bicg_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    nx, ny = size["nx"], size["ny"]
    return {
        "A": rng.random((nx, ny), dtype=np.float32) - 0.5,
        "r": rng.random(nx, dtype=np.float32),
        "p": rng.random(ny, dtype=np.float32),
        "s": np.zeros(ny, dtype=np.float32),
        "q": np.zeros(nx, dtype=np.float32),
    }


def _bicg_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    nx, ny = data.size["nx"], data.size["ny"]
    buf = data.buf
    data.kernel("bicg_kernel1")(queue, (ny,), None,
                                buf["A"], buf["r"], buf["s"], np.int32(nx), np.int32(ny))
    data.kernel("bicg_kernel2")(queue, (nx,), None,
                                buf["A"], buf["p"], buf["q"], np.int32(nx), np.int32(ny))
    return data.read(queue, "s", "q")


def _bicg_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    return (inputs["r"].astype(np.float64) @ a, a @ inputs["p"].astype(np.float64))


BICG = Program(
    name="bicg", summary="s = A^T r and q = A p, local size left to the runtime",
    source=BICG_SOURCE,
    sizes={"small": {"nx": 310, "ny": 270}, "default": {"nx": 4100, "ny": 3900}},
    inputs=_bicg_inputs, run=_bicg_run, reference=_bicg_reference, tolerance=1e-3)


MVT_SOURCE = """
__kernel void mvt_kernel1(__global float *a, __global float *x1, __global float *y1, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;

    for (int j = 0; j < n; j++) {
        x1[i] += a[i * n + j] * y1[j];
    }
}

__kernel void mvt_kernel2(__global float *a, __global float *x2, __global float *y2, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;

    for (int j = 0; j < n; j++) {
        x2[i] += a[j * n + i] * y2[j];
    }
}
"""


def _mvt_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    return {
        "a": rng.random((n, n), dtype=np.float32) - 0.5,
        "x1": rng.random(n, dtype=np.float32),
        "x2": rng.random(n, dtype=np.float32),
        "y1": rng.random(n, dtype=np.float32),
        "y2": rng.random(n, dtype=np.float32),
    }


def _mvt_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    data.restore(queue, "x1", "x2")
    data.kernel("mvt_kernel1")(queue, (round_up(n, 256),), (256,),
                               buf["a"], buf["x1"], buf["y1"], np.int32(n))
    data.kernel("mvt_kernel2")(queue, (round_up(n, 256),), (256,),
                               buf["a"], buf["x2"], buf["y2"], np.int32(n))
    return data.read(queue, "x1", "x2")


def _mvt_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["a"].astype(np.float64)
    return (inputs["x1"] + a @ inputs["y1"].astype(np.float64),
            inputs["x2"] + a.T @ inputs["y2"].astype(np.float64))


MVT = Program(
    name="mvt", summary="x1 += A y1, x2 += A^T y2, accumulating in global memory",
    source=MVT_SOURCE,
    sizes={"small": {"n": 333}, "default": {"n": 4000}},
    inputs=_mvt_inputs, run=_mvt_run, reference=_mvt_reference, tolerance=1e-3)


GESUMMV_SOURCE = """
__kernel void gesummv_kernel(__global float *a, __global float *b, __global float *x,
                             __global float *y, __global float *tmp,
                             float alpha, float beta, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++) {
            tmp[i] += a[i * n + j] * x[j];
            y[i] += b[i * n + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
"""


def _gesummv_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    return {
        "a": rng.random((n, n), dtype=np.float32) - 0.5,
        "b": rng.random((n, n), dtype=np.float32) - 0.5,
        "x": rng.random(n, dtype=np.float32),
        "y": np.zeros(n, dtype=np.float32),
        "tmp": np.zeros(n, dtype=np.float32),
    }


def _gesummv_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    data.restore(queue, "y", "tmp")
    data.kernel("gesummv_kernel")(queue, (round_up(n, 256),), (256,),
                                  buf["a"], buf["b"], buf["x"], buf["y"], buf["tmp"],
                                  np.float32(1.5), np.float32(1.2), np.int32(n))
    return data.read(queue, "y")


def _gesummv_reference(size: Size, inputs: Arrays) -> Result:
    x = inputs["x"].astype(np.float64)
    return (1.5 * (inputs["a"] @ x) + 1.2 * (inputs["b"] @ x),)


GESUMMV = Program(
    name="gesummv", summary="y = alpha A x + beta B x, two row walks in one work-item",
    source=GESUMMV_SOURCE,
    sizes={"small": {"n": 290}, "default": {"n": 3000}},
    inputs=_gesummv_inputs, run=_gesummv_run, reference=_gesummv_reference, tolerance=1e-3)

PROGRAMS = [ATAX, BICG, MVT, GESUMMV]
