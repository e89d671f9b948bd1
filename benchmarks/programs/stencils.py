"""Time-stepped stencils driven from the host: Jacobi 1D and 2D (a stencil kernel and a copy
kernel per step), heat 3D (two sweeps per step, each work-item walking a column of planes),
FDTD-2D (three kernels per step) and an ADI-style solver (row sweeps in one launch, column
sweeps as one launch per row: thousands of launches)."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

JACOBI1D_SOURCE = """
__kernel void jacobi1d_kernel1(__global float *A, __global float *B, int n)
{
    int i = get_global_id(0);

    if ((i > 0) && (i < (n - 1))) {
        B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    }
}

__kernel void jacobi1d_kernel2(__global float *A, __global float *B, int n)
{
    int j = get_global_id(0);

    if ((j > 0) && (j < (n - 1))) {
        A[j] = B[j];
    }
}
"""


def _jacobi1d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    a = rng.random(n, dtype=np.float32)
    return {"A": a, "B": a.copy()}


def _jacobi1d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    stencil = data.kernel("jacobi1d_kernel1")
    copy = data.kernel("jacobi1d_kernel2")
    data.restore(queue, "A", "B")
    grid = (round_up(n, 256),)
    for _ in range(data.size["steps"]):
        stencil(queue, grid, (256,), buf["A"], buf["B"], np.int32(n))
        copy(queue, grid, (256,), buf["A"], buf["B"], np.int32(n))
    return data.read(queue, "A")


def _jacobi1d_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    for _ in range(size["steps"]):
        a[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
    return (a,)


JACOBI1D = Program(
    name="jacobi1d", summary="3-point Jacobi, a stencil and a copy kernel per step",
    source=JACOBI1D_SOURCE,
    sizes={"small": {"n": 1000, "steps": 20}, "default": {"n": 1 << 20, "steps": 200}},
    inputs=_jacobi1d_inputs, run=_jacobi1d_run, reference=_jacobi1d_reference,
    tolerance=1e-4)


JACOBI2D_SOURCE = """
__kernel void jacobi2d_kernel1(__global float *A, __global float *B, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i >= 1) && (i < (n - 1)) && (j >= 1) && (j < (n - 1))) {
        B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + (j - 1)] + A[i * n + (1 + j)]
                              + A[(1 + i) * n + j] + A[(i - 1) * n + j]);
    }
}

__kernel void jacobi2d_kernel2(__global float *A, __global float *B, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < 1 || i >= n - 1 || j < 1 || j >= n - 1)
        return;

    A[i * n + j] = B[i * n + j];
}
"""


def _jacobi2d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    a = rng.random((n, n), dtype=np.float32)
    return {"A": a, "B": a.copy()}


def _jacobi2d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    stencil = data.kernel("jacobi2d_kernel1")
    copy = data.kernel("jacobi2d_kernel2")
    data.restore(queue, "A", "B")
    grid = (round_up(n, 32), round_up(n, 8))
    for _ in range(data.size["steps"]):
        stencil(queue, grid, (32, 8), buf["A"], buf["B"], np.int32(n))
        copy(queue, grid, (32, 8), buf["A"], buf["B"], np.int32(n))
    return data.read(queue, "A")


def _jacobi2d_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    for _ in range(size["steps"]):
        a[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1]
                               + a[:-2, 1:-1])
    return (a,)


JACOBI2D = Program(
    name="jacobi2d", summary="5-point Jacobi, a stencil and a copy kernel per step, 32x8",
    source=JACOBI2D_SOURCE,
    sizes={"small": {"n": 50, "steps": 10}, "default": {"n": 2000, "steps": 20}},
    inputs=_jacobi2d_inputs, run=_jacobi2d_run, reference=_jacobi2d_reference,
    tolerance=1e-4)


HEAT3D_SOURCE = """
/* One work-item per (j, k) column walks the planes i; two launches per time step. */
__kernel void heat3d_step(__global const float *A, __global float *B, int n)
{
    int k = get_global_id(0);
    int j = get_global_id(1);
    if (j < 1 || j >= n - 1 || k < 1 || k >= n - 1)
        return;

    for (int i = 1; i < n - 1; i++) {
        int c = (i * n + j) * n + k;
        B[c] = 0.125 * (A[c + n * n] - 2.0 * A[c] + A[c - n * n])
             + 0.125 * (A[c + n] - 2.0 * A[c] + A[c - n])
             + 0.125 * (A[c + 1] - 2.0 * A[c] + A[c - 1])
             + A[c];
    }
}
"""


def _heat3d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    a = rng.random((n, n, n), dtype=np.float32)
    return {"A": a, "B": a.copy()}


def _heat3d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    step = data.kernel("heat3d_step")
    data.restore(queue, "A", "B")
    grid = (round_up(n, 32), round_up(n, 8))
    for _ in range(data.size["steps"]):
        step(queue, grid, (32, 8), buf["A"], buf["B"], np.int32(n))
        step(queue, grid, (32, 8), buf["B"], buf["A"], np.int32(n))
    return data.read(queue, "A")


def _heat3d_sweep(a: np.ndarray, b: np.ndarray) -> None:
    c = a[1:-1, 1:-1, 1:-1]
    b[1:-1, 1:-1, 1:-1] = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * c + a[:-2, 1:-1, 1:-1])
                           + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * c + a[1:-1, :-2, 1:-1])
                           + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * c + a[1:-1, 1:-1, :-2])
                           + c)


def _heat3d_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    for _ in range(size["steps"]):
        _heat3d_sweep(a, b)
        _heat3d_sweep(b, a)
    return (a,)


HEAT3D = Program(
    name="heat3d", summary="7-point heat equation, work-items walk the third dimension",
    source=HEAT3D_SOURCE,
    sizes={"small": {"n": 20, "steps": 4}, "default": {"n": 160, "steps": 10}},
    inputs=_heat3d_inputs, run=_heat3d_run, reference=_heat3d_reference, tolerance=1e-4)


FDTD2D_SOURCE = """
__kernel void fdtd_kernel1(__global float *_fict_, __global float *ex, __global float *ey,
                           __global float *hz, int t, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < nx) && (j < ny)) {
        if (i == 0) {
            ey[i * ny + j] = _fict_[t];
        } else {
            ey[i * ny + j] = ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
        }
    }
}

__kernel void fdtd_kernel2(__global float *ex, __global float *ey, __global float *hz,
                           int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < nx) && (j < ny) && (j > 0)) {
        ex[i * ny + j] = ex[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[i * ny + (j - 1)]);
    }
}

__kernel void fdtd_kernel3(__global float *ex, __global float *ey, __global float *hz,
                           int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= nx - 1 || j >= ny - 1)
        return;

    hz[i * ny + j] = hz[i * ny + j] - 0.7 * (ex[i * ny + (j + 1)] - ex[i * ny + j]
                                             + ey[(i + 1) * ny + j] - ey[i * ny + j]);
}
"""


def _fdtd2d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    nx, ny, tmax = size["nx"], size["ny"], size["tmax"]
    return {
        "fict": np.arange(tmax, dtype=np.float32),
        "ex": rng.random((nx, ny), dtype=np.float32),
        "ey": rng.random((nx, ny), dtype=np.float32),
        "hz": rng.random((nx, ny), dtype=np.float32),
    }


def _fdtd2d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    nx, ny = data.size["nx"], data.size["ny"]
    buf = data.buf
    data.restore(queue, "ex", "ey", "hz")
    grid = (round_up(ny, 32), round_up(nx, 8))
    sizes = (np.int32(nx), np.int32(ny))
    fields = (buf["ex"], buf["ey"], buf["hz"])
    for t in range(data.size["tmax"]):
        data.kernel("fdtd_kernel1")(queue, grid, (32, 8), buf["fict"], *fields, np.int32(t),
                                    *sizes)
        data.kernel("fdtd_kernel2")(queue, grid, (32, 8), *fields, *sizes)
        data.kernel("fdtd_kernel3")(queue, grid, (32, 8), *fields, *sizes)
    return data.read(queue, "hz")


def _fdtd2d_reference(size: Size, inputs: Arrays) -> Result:
    ex, ey, hz = (inputs[name].astype(np.float64) for name in ("ex", "ey", "hz"))
    for t in range(size["tmax"]):
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ey[0, :] = inputs["fict"][t]
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return (hz,)


FDTD2D = Program(
    name="fdtd2d", summary="2D finite-difference time domain, 3 kernels per step",
    source=FDTD2D_SOURCE,
    sizes={"small": {"nx": 40, "ny": 50, "tmax": 6},
           "default": {"nx": 2000, "ny": 2000, "tmax": 20}},
    inputs=_fdtd2d_inputs, run=_fdtd2d_run, reference=_fdtd2d_reference, tolerance=1e-4)


ADI_SOURCE = """
/* Row sweeps: one work-item per row runs the whole recurrence along it. */
__kernel void adi_rows_forward(__global float *A, __global float *B, __global float *X, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 1; j < n; j++) {
            X[i * n + j] = X[i * n + j] - X[i * n + (j - 1)] * A[i * n + j] / B[i * n + (j - 1)];
            B[i * n + j] = B[i * n + j] - A[i * n + j] * A[i * n + j] / B[i * n + (j - 1)];
        }
    }
}

__kernel void adi_rows_backward(__global float *A, __global float *B, __global float *X, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;

    X[i * n + (n - 1)] = X[i * n + (n - 1)] / B[i * n + (n - 1)];
    for (int j = n - 2; j >= 0; j--) {
        X[i * n + j] = (X[i * n + j] - A[i * n + (j + 1)] * X[i * n + (j + 1)]) / B[i * n + j];
    }
}

/* Column sweeps: the host walks the rows, one launch per row, a work-item per column. */
__kernel void adi_columns_forward(__global float *A, __global float *B, __global float *X,
                                  int i, int n)
{
    int j = get_global_id(0);

    if (j < n) {
        X[i * n + j] = X[i * n + j] - X[(i - 1) * n + j] * A[i * n + j] / B[(i - 1) * n + j];
        B[i * n + j] = B[i * n + j] - A[i * n + j] * A[i * n + j] / B[(i - 1) * n + j];
    }
}

__kernel void adi_columns_last(__global float *B, __global float *X, int n)
{
    int j = get_global_id(0);

    if (j < n) {
        X[(n - 1) * n + j] = X[(n - 1) * n + j] / B[(n - 1) * n + j];
    }
}

__kernel void adi_columns_backward(__global float *A, __global float *B, __global float *X,
                                   int i, int n)
{
    int j = get_global_id(0);
    if (j >= n)
        return;

    X[i * n + j] = (X[i * n + j] - A[(i + 1) * n + j] * X[(i + 1) * n + j]) / B[i * n + j];
}
"""


def _adi_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    return {
        "A": (rng.random((n, n), dtype=np.float32) * 0.1).astype(np.float32),
        "B": (rng.random((n, n), dtype=np.float32) + 4.0).astype(np.float32),
        "X": rng.random((n, n), dtype=np.float32),
    }


def _adi_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    a, b, x = data.buf["A"], data.buf["B"], data.buf["X"]
    rows_forward = data.kernel("adi_rows_forward")
    rows_backward = data.kernel("adi_rows_backward")
    columns_forward = data.kernel("adi_columns_forward")
    columns_last = data.kernel("adi_columns_last")
    columns_backward = data.kernel("adi_columns_backward")
    data.restore(queue, "B", "X")
    grid = (round_up(n, 256),)
    size = np.int32(n)
    for _ in range(data.size["steps"]):
        rows_forward(queue, grid, (256,), a, b, x, size)
        rows_backward(queue, grid, (256,), a, b, x, size)
        for i in range(1, n):
            columns_forward(queue, grid, (256,), a, b, x, np.int32(i), size)
        columns_last(queue, grid, (256,), b, x, size)
        for i in range(n - 2, -1, -1):
            columns_backward(queue, grid, (256,), a, b, x, np.int32(i), size)
    return data.read(queue, "X")


def _adi_reference(size: Size, inputs: Arrays) -> Result:
    a, b, x = (inputs[name].astype(np.float64) for name in ("A", "B", "X"))
    n = size["n"]
    for _ in range(size["steps"]):
        for j in range(1, n):
            x[:, j] -= x[:, j - 1] * a[:, j] / b[:, j - 1]
            b[:, j] -= a[:, j] * a[:, j] / b[:, j - 1]
        x[:, n - 1] /= b[:, n - 1]
        for j in range(n - 2, -1, -1):
            x[:, j] = (x[:, j] - a[:, j + 1] * x[:, j + 1]) / b[:, j]
        for i in range(1, n):
            x[i, :] -= x[i - 1, :] * a[i, :] / b[i - 1, :]
            b[i, :] -= a[i, :] * a[i, :] / b[i - 1, :]
        x[n - 1, :] /= b[n - 1, :]
        for i in range(n - 2, -1, -1):
            x[i, :] = (x[i, :] - a[i + 1, :] * x[i + 1, :]) / b[i, :]
    return (x,)


ADI = Program(
    name="adi", summary="alternating-direction sweeps, a launch per row for the column sweeps",
    source=ADI_SOURCE,
    sizes={"small": {"n": 40, "steps": 2}, "default": {"n": 1024, "steps": 2}},
    inputs=_adi_inputs, run=_adi_run, reference=_adi_reference, tolerance=1e-4)

PROGRAMS = [JACOBI1D, JACOBI2D, HEAT3D, FDTD2D, ADI]
