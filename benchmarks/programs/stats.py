"""Covariance and correlation of the columns of an n x m data matrix (n observations of m
variables): a kernel per column for the means (and deviations), a 2D kernel that centres the
data, and one work-item per variable computing its row of the symmetric result, walking every
observation for every partner. Double literals (``1.0``, ``0.1``) in float code, as written."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

COVARIANCE_SOURCE = """
__kernel void covar_mean(__global float *mean, __global float *data, float float_n,
                         int m, int n)
{
    int j = get_global_id(0);

    if (j < m) {
        mean[j] = 0.0;
        for (int i = 0; i < n; i++) {
            mean[j] += data[i * m + j];
        }
        mean[j] /= float_n;
    }
}

__kernel void covar_reduce(__global float *mean, __global float *data, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < m)) {
        data[i * m + j] -= mean[j];
    }
}

__kernel void covar_covar(__global float *symmat, __global float *data, float float_n,
                          int m, int n)
{
    int j1 = get_global_id(0);
    if (j1 >= m)
        return;

    for (int j2 = j1; j2 < m; j2++) {
        float sum = 0.0;
        for (int i = 0; i < n; i++) {
            sum += data[i * m + j1] * data[i * m + j2];
        }
        sum = sum / (float_n - 1.0);
        symmat[j1 * m + j2] = sum;
        symmat[j2 * m + j1] = sum;
    }
}
"""


def _stats_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n, m = size["n"], size["m"]
    return {
        "data": (rng.random((n, m), dtype=np.float32) * 4.0 + np.arange(m, dtype=np.float32)
                 / m).astype(np.float32),
        "mean": np.zeros(m, dtype=np.float32),
        "std": np.zeros(m, dtype=np.float32),
        "symmat": np.zeros((m, m), dtype=np.float32),
    }


def _covariance_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n, m = data.size["n"], data.size["m"]
    buf = data.buf
    data.restore(queue, "data")
    data.kernel("covar_mean")(queue, (round_up(m, 256),), (256,), buf["mean"], buf["data"],
                              np.float32(n), np.int32(m), np.int32(n))
    data.kernel("covar_reduce")(queue, (round_up(m, 32), round_up(n, 8)), (32, 8),
                                buf["mean"], buf["data"], np.int32(m), np.int32(n))
    data.kernel("covar_covar")(queue, (round_up(m, 256),), (256,), buf["symmat"],
                               buf["data"], np.float32(n), np.int32(m), np.int32(n))
    return data.read(queue, "symmat")


def _covariance_reference(size: Size, inputs: Arrays) -> Result:
    return (np.cov(inputs["data"].astype(np.float64), rowvar=False),)


COVARIANCE = Program(
    name="covariance", summary="column means, centring, a row of the covariance per work-item",
    source=COVARIANCE_SOURCE,
    sizes={"small": {"n": 70, "m": 50}, "default": {"n": 1000, "m": 700}},
    inputs=_stats_inputs, run=_covariance_run, reference=_covariance_reference,
    tolerance=1e-3)


CORRELATION_SOURCE = """
#define EPS 0.1

__kernel void corr_mean(__global float *mean, __global float *data, float float_n,
                        int m, int n)
{
    int j = get_global_id(0);

    if (j < m) {
        mean[j] = 0.0;
        for (int i = 0; i < n; i++) {
            mean[j] += data[i * m + j];
        }
        mean[j] /= float_n;
    }
}

__kernel void corr_std(__global float *mean, __global float *std, __global float *data,
                       float float_n, int m, int n)
{
    int j = get_global_id(0);
    if (j >= m)
        return;

    std[j] = 0.0;
    for (int i = 0; i < n; i++) {
        std[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
    }
    std[j] /= float_n;
    std[j] = sqrt(std[j]);
    if (std[j] <= EPS) {
        std[j] = 1.0;
    }
}

__kernel void corr_reduce(__global float *mean, __global float *std, __global float *data,
                          float float_n, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < m)) {
        data[i * m + j] -= mean[j];
        data[i * m + j] /= sqrt(float_n) * std[j];
    }
}

__kernel void corr_corr(__global float *symmat, __global float *data, int m, int n)
{
    int j1 = get_global_id(0);

    if (j1 < m - 1) {
        symmat[j1 * m + j1] = 1.0;
        for (int j2 = j1 + 1; j2 < m; j2++) {
            symmat[j1 * m + j2] = 0.0;
            for (int i = 0; i < n; i++) {
                symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
            }
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
}
"""


def _correlation_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n, m = data.size["n"], data.size["m"]
    buf = data.buf
    columns = (round_up(m, 256),)
    data.restore(queue, "data")
    data.kernel("corr_mean")(queue, columns, (256,), buf["mean"], buf["data"],
                             np.float32(n), np.int32(m), np.int32(n))
    data.kernel("corr_std")(queue, columns, (256,), buf["mean"], buf["std"], buf["data"],
                            np.float32(n), np.int32(m), np.int32(n))
    data.kernel("corr_reduce")(queue, (round_up(m, 32), round_up(n, 8)), (32, 8),
                               buf["mean"], buf["std"], buf["data"], np.float32(n),
                               np.int32(m), np.int32(n))
    data.kernel("corr_corr")(queue, columns, (256,), buf["symmat"], buf["data"],
                             np.int32(m), np.int32(n))
    (symmat,) = data.read(queue, "symmat")
    # The last diagonal element is never written by the kernels (PolyBench sets it on the host).
    symmat[m - 1, m - 1] = 1.0
    return (symmat,)


def _correlation_reference(size: Size, inputs: Arrays) -> Result:
    return (np.asarray(np.corrcoef(inputs["data"].astype(np.float64), rowvar=False)),)


CORRELATION = Program(
    name="correlation", summary="means, deviations, normalization, correlation rows: 4 kernels",
    source=CORRELATION_SOURCE,
    sizes={"small": {"n": 64, "m": 48}, "default": {"n": 1000, "m": 700}},
    inputs=_stats_inputs, run=_correlation_run, reference=_correlation_reference,
    tolerance=1e-3)

PROGRAMS = [COVARIANCE, CORRELATION]
