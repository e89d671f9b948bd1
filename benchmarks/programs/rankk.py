"""Symmetric rank-k updates: syrk (C = alpha A A^T + beta C) and syr2k (C = alpha A B^T +
alpha B A^T + beta C), computed over the full square as the GPU versions do, one work-item per
element of C with the inner product as its loop."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

ALPHA = 1.25
BETA = 0.75

SYRK_SOURCE = """
__kernel void syrk_scale(__global float *c, float beta, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
    }
}

__kernel void syrk_update(__global float *a, __global float *c, float alpha, int n, int m)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < n)) {
        for (int k = 0; k < m; k++) {
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
        }
    }
}
"""


def _syrk_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n, m = size["n"], size["m"]
    return {
        "a": rng.random((n, m), dtype=np.float32),
        "b": rng.random((n, m), dtype=np.float32),
        "c": rng.random((n, n), dtype=np.float32),
    }


def _syrk_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n, m = data.size["n"], data.size["m"]
    buf = data.buf
    grid = (round_up(n, 32), round_up(n, 8))
    data.restore(queue, "c")
    data.kernel("syrk_scale")(queue, grid, (32, 8), buf["c"], np.float32(BETA), np.int32(n))
    data.kernel("syrk_update")(queue, grid, (32, 8), buf["a"], buf["c"], np.float32(ALPHA),
                               np.int32(n), np.int32(m))
    return data.read(queue, "c")


def _syrk_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["a"].astype(np.float64)
    return (ALPHA * a @ a.T + BETA * inputs["c"],)


SYRK = Program(
    name="syrk", summary="C = alpha A A^T + beta C, a scaling and an update kernel",
    source=SYRK_SOURCE,
    sizes={"small": {"n": 45, "m": 37}, "default": {"n": 520, "m": 500}},
    inputs=_syrk_inputs, run=_syrk_run, reference=_syrk_reference)


SYR2K_SOURCE = """
__kernel void syr2k_kernel(__global float *a, __global float *b, __global float *c,
                           float alpha, float beta, int n, int m)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= n || j >= n)
        return;

    c[i * n + j] *= beta;
    for (int k = 0; k < m; k++) {
        c[i * n + j] += alpha * a[i * m + k] * b[j * m + k]
                      + alpha * b[i * m + k] * a[j * m + k];
    }
}
"""


def _syr2k_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n, m = data.size["n"], data.size["m"]
    buf = data.buf
    data.restore(queue, "c")
    data.kernel("syr2k_kernel")(queue, (round_up(n, 32), round_up(n, 8)), (32, 8),
                                buf["a"], buf["b"], buf["c"], np.float32(ALPHA),
                                np.float32(BETA), np.int32(n), np.int32(m))
    return data.read(queue, "c")


def _syr2k_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    return (ALPHA * (a @ b.T + b @ a.T) + BETA * inputs["c"],)


SYR2K = Program(
    name="syr2k", summary="C = alpha (A B^T + B A^T) + beta C, early return at the bounds",
    source=SYR2K_SOURCE,
    sizes={"small": {"n": 41, "m": 33}, "default": {"n": 400, "m": 380}},
    inputs=_syrk_inputs, run=_syr2k_run, reference=_syr2k_reference)

PROGRAMS = [SYRK, SYR2K]
