"""Factorizations driven by a host loop of small launches: LU without pivoting (two launches per
pivot over the whole matrix, guards skipping the finished part), modified Gram-Schmidt (three
launches per column, one of them a single work-item) and a right-looking Cholesky (three
launches per column over shrinking grids)."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

LU_SOURCE = """
__kernel void lu_kernel1(__global float *A, int k, int n)
{
    int j = get_global_id(0);

    if ((j > k) && (j < n)) {
        A[k * n + j] = A[k * n + j] / A[k * n + k];
    }
}

__kernel void lu_kernel2(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i > k) && (j > k) && (i < n) && (j < n)) {
        A[i * n + j] = A[i * n + j] - A[i * n + k] * A[k * n + j];
    }
}
"""


def _dominant_matrix(n: int, rng: np.random.Generator) -> np.ndarray:
    return (rng.random((n, n), dtype=np.float32) + n * np.eye(n, dtype=np.float32))


def _lu_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    return {"A": _dominant_matrix(size["n"], rng)}


def _lu_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    a = data.buf["A"]
    scale_row = data.kernel("lu_kernel1")
    update = data.kernel("lu_kernel2")
    data.restore(queue, "A")
    for k in range(n):
        scale_row(queue, (round_up(n, 256),), (256,), a, np.int32(k), np.int32(n))
        update(queue, (round_up(n, 32), round_up(n, 8)), (32, 8), a, np.int32(k), np.int32(n))
    return data.read(queue, "A")


def _lu_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    n = size["n"]
    for k in range(n):
        a[k, k + 1:] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return (a,)


LU = Program(
    name="lu", summary="LU without pivoting, 2 launches per pivot over the whole matrix",
    source=LU_SOURCE,
    sizes={"small": {"n": 40}, "default": {"n": 384}},
    inputs=_lu_inputs, run=_lu_run, reference=_lu_reference, tolerance=1e-4)


GRAMSCHMIDT_SOURCE = """
__kernel void gramschmidt_kernel1(__global float *a, __global float *r, int k, int m, int n)
{
    int tid = get_global_id(0);

    if (tid == 0) {
        float nrm = 0.0;
        for (int i = 0; i < m; i++) {
            nrm += a[i * n + k] * a[i * n + k];
        }
        r[k * n + k] = sqrt(nrm);
    }
}

__kernel void gramschmidt_kernel2(__global float *a, __global float *r, __global float *q,
                                  int k, int m, int n)
{
    int i = get_global_id(0);

    if (i < m) {
        q[i * n + k] = a[i * n + k] / r[k * n + k];
    }
}

__kernel void gramschmidt_kernel3(__global float *a, __global float *r, __global float *q,
                                  int k, int m, int n)
{
    int j = get_global_id(0);
    if ((j <= k) || (j >= n))
        return;

    r[k * n + j] = 0.0;
    for (int i = 0; i < m; i++) {
        r[k * n + j] += q[i * n + k] * a[i * n + j];
    }
    for (int i = 0; i < m; i++) {
        a[i * n + j] -= q[i * n + k] * r[k * n + j];
    }
}
"""


def _gramschmidt_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    m, n = size["m"], size["n"]
    return {
        "a": rng.random((m, n), dtype=np.float32) - 0.5,
        "r": np.zeros((n, n), dtype=np.float32),
        "q": np.zeros((m, n), dtype=np.float32),
    }


def _gramschmidt_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    m, n = data.size["m"], data.size["n"]
    buf = data.buf
    norm = data.kernel("gramschmidt_kernel1")
    normalize = data.kernel("gramschmidt_kernel2")
    project = data.kernel("gramschmidt_kernel3")
    data.restore(queue, "a", "r")
    for k in range(n):
        args = (np.int32(k), np.int32(m), np.int32(n))
        norm(queue, (1,), (1,), buf["a"], buf["r"], *args)
        normalize(queue, (round_up(m, 256),), (256,), buf["a"], buf["r"], buf["q"], *args)
        project(queue, (round_up(n, 256),), (256,), buf["a"], buf["r"], buf["q"], *args)
    return data.read(queue, "q", "r")


def _gramschmidt_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["a"].astype(np.float64)
    m, n = a.shape
    q = np.zeros((m, n))
    r = np.zeros((n, n))
    for k in range(n):
        r[k, k] = np.sqrt(a[:, k] @ a[:, k])
        q[:, k] = a[:, k] / r[k, k]
        r[k, k + 1:] = q[:, k] @ a[:, k + 1:]
        a[:, k + 1:] -= np.outer(q[:, k], r[k, k + 1:])
    return (q, r)


GRAMSCHMIDT = Program(
    name="gramschmidt", summary="modified Gram-Schmidt QR, 3 launches per column",
    source=GRAMSCHMIDT_SOURCE,
    sizes={"small": {"m": 48, "n": 32}, "default": {"m": 768, "n": 512}},
    inputs=_gramschmidt_inputs, run=_gramschmidt_run, reference=_gramschmidt_reference,
    tolerance=1e-3)


CHOLESKY_SOURCE = """
__kernel void chol_diag(__global float *a, int k, int n)
{
    a[k * n + k] = sqrt(a[k * n + k]);
}

__kernel void chol_column(__global float *a, int k, int n)
{
    int i = get_global_id(0) + k + 1;
    if (i >= n)
        return;
    a[i * n + k] = a[i * n + k] / a[k * n + k];
}

/* The trailing lower triangle: rows and columns after k, j <= i. */
__kernel void chol_update(__global float *a, int k, int n)
{
    int j = get_global_id(0) + k + 1;
    int i = get_global_id(1) + k + 1;

    if (i < n && j <= i) {
        a[i * n + j] -= a[i * n + k] * a[j * n + k];
    }
}
"""


def _cholesky_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    b = rng.random((n, n)) - 0.5
    return {"a": (b @ b.T + n * np.eye(n)).astype(np.float32)}


def _cholesky_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    a = data.buf["a"]
    diag = data.kernel("chol_diag")
    column = data.kernel("chol_column")
    update = data.kernel("chol_update")
    data.restore(queue, "a")
    for k in range(n):
        rest = n - k - 1
        diag(queue, (1,), None, a, np.int32(k), np.int32(n))
        if rest == 0:
            break
        column(queue, (round_up(rest, 64),), (64,), a, np.int32(k), np.int32(n))
        update(queue, (round_up(rest, 32), round_up(rest, 8)), (32, 8), a, np.int32(k),
               np.int32(n))
    (result,) = data.read(queue, "a")
    return (np.tril(result),)


def _cholesky_reference(size: Size, inputs: Arrays) -> Result:
    return (np.linalg.cholesky(inputs["a"].astype(np.float64)),)


CHOLESKY = Program(
    name="cholesky", summary="right-looking Cholesky, 3 launches per column, shrinking grids",
    source=CHOLESKY_SOURCE,
    sizes={"small": {"n": 50}, "default": {"n": 640}},
    inputs=_cholesky_inputs, run=_cholesky_run, reference=_cholesky_reference,
    tolerance=1e-4)

PROGRAMS = [LU, GRAMSCHMIDT, CHOLESKY]
