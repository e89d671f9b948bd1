"""Matrix products of several shapes: gemm, 2mm (two chained products), 3mm (three).

One work-item per output element, the dot product as a loop inside the work-item, 32x8
work-groups over a grid rounded up to them and a guard on the matrix bounds."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

GEMM_SOURCE = """
__kernel void gemm(__global float *a, __global float *b, __global float *c,
                   float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++) {
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
        }
    }
}
"""


def _gemm_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    ni, nj, nk = size["ni"], size["nj"], size["nk"]
    return {
        "a": rng.random((ni, nk), dtype=np.float32),
        "b": rng.random((nk, nj), dtype=np.float32),
        "c": rng.random((ni, nj), dtype=np.float32),
    }


ALPHA = 1.5
BETA = 1.2


def _gemm_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    ni, nj, nk = data.size["ni"], data.size["nj"], data.size["nk"]
    data.restore(queue, "c")
    data.kernel("gemm")(queue, (round_up(nj, 32), round_up(ni, 8)), (32, 8),
                        data.buf["a"], data.buf["b"], data.buf["c"],
                        np.float32(ALPHA), np.float32(BETA),
                        np.int32(ni), np.int32(nj), np.int32(nk))
    return data.read(queue, "c")


def _gemm_reference(size: Size, inputs: Arrays) -> Result:
    a, b, c = (inputs[name].astype(np.float64) for name in ("a", "b", "c"))
    return (ALPHA * a @ b + BETA * c,)


GEMM = Program(
    name="gemm", summary="C = alpha A B + beta C, accumulating in global memory",
    source=GEMM_SOURCE,
    sizes={"small": {"ni": 37, "nj": 45, "nk": 29}, "default": {"ni": 500, "nj": 540, "nk": 520}},
    inputs=_gemm_inputs, run=_gemm_run, reference=_gemm_reference)


MM2_SOURCE = """
__kernel void mm2_kernel1(__global float *tmp, __global float *a, __global float *b,
                          float alpha, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < ni) && (j < nj)) {
        tmp[i * nj + j] = 0;
        for (int k = 0; k < nk; k++) {
            tmp[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
        }
    }
}

__kernel void mm2_kernel2(__global float *tmp, __global float *c, __global float *d,
                          float beta, int ni, int nj, int nl)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < ni) && (j < nl)) {
        d[i * nl + j] *= beta;
        for (int k = 0; k < nj; k++) {
            d[i * nl + j] += tmp[i * nj + k] * c[k * nl + j];
        }
    }
}
"""


def _mm2_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    ni, nj, nk, nl = size["ni"], size["nj"], size["nk"], size["nl"]
    return {
        "a": rng.random((ni, nk), dtype=np.float32),
        "b": rng.random((nk, nj), dtype=np.float32),
        "c": rng.random((nj, nl), dtype=np.float32),
        "d": rng.random((ni, nl), dtype=np.float32),
        "tmp": np.zeros((ni, nj), dtype=np.float32),
    }


def _mm2_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    ni, nj, nk, nl = (data.size[key] for key in ("ni", "nj", "nk", "nl"))
    buf = data.buf
    data.restore(queue, "d")
    data.kernel("mm2_kernel1")(queue, (round_up(nj, 32), round_up(ni, 8)), (32, 8),
                               buf["tmp"], buf["a"], buf["b"], np.float32(ALPHA),
                               np.int32(ni), np.int32(nj), np.int32(nk))
    data.kernel("mm2_kernel2")(queue, (round_up(nl, 32), round_up(ni, 8)), (32, 8),
                               buf["tmp"], buf["c"], buf["d"], np.float32(BETA),
                               np.int32(ni), np.int32(nj), np.int32(nl))
    return data.read(queue, "d")


def _mm2_reference(size: Size, inputs: Arrays) -> Result:
    a, b, c, d = (inputs[name].astype(np.float64) for name in ("a", "b", "c", "d"))
    return ((ALPHA * a @ b) @ c + BETA * d,)


MM2 = Program(
    name="2mm", summary="D = alpha A B C + beta D as two products, 2 kernels",
    source=MM2_SOURCE,
    sizes={"small": {"ni": 33, "nj": 40, "nk": 27, "nl": 35},
           "default": {"ni": 400, "nj": 420, "nk": 380, "nl": 440}},
    inputs=_mm2_inputs, run=_mm2_run, reference=_mm2_reference)


MM3_SOURCE = """
/* out (rows x cols) = left (rows x inner) * right (inner x cols); launched once per product. */
__kernel void mm3_product(__global const float *left, __global const float *right,
                          __global float *out, int rows, int cols, int inner)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= rows || j >= cols)
        return;

    float sum = 0.0;
    for (int k = 0; k < inner; k++)
        sum += left[i * inner + k] * right[k * cols + j];
    out[i * cols + j] = sum;
}
"""


def _mm3_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    ni, nj, nk, nl, nm = (size[key] for key in ("ni", "nj", "nk", "nl", "nm"))
    return {
        "a": rng.random((ni, nk), dtype=np.float32) - 0.5,
        "b": rng.random((nk, nj), dtype=np.float32) - 0.5,
        "c": rng.random((nj, nm), dtype=np.float32) - 0.5,
        "d": rng.random((nm, nl), dtype=np.float32) - 0.5,
        "e": np.zeros((ni, nj), dtype=np.float32),
        "f": np.zeros((nj, nl), dtype=np.float32),
        "g": np.zeros((ni, nl), dtype=np.float32),
    }


def _mm3_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    ni, nj, nk, nl, nm = (data.size[key] for key in ("ni", "nj", "nk", "nl", "nm"))
    buf = data.buf
    product = data.kernel("mm3_product")

    def launch(left: str, right: str, out: str, rows: int, cols: int, inner: int) -> None:
        product(queue, (round_up(cols, 32), round_up(rows, 8)), (32, 8),
                buf[left], buf[right], buf[out], np.int32(rows), np.int32(cols), np.int32(inner))

    launch("a", "b", "e", ni, nj, nk)
    launch("c", "d", "f", nj, nl, nm)
    launch("e", "f", "g", ni, nl, nj)
    return data.read(queue, "g")


def _mm3_reference(size: Size, inputs: Arrays) -> Result:
    a, b, c, d = (inputs[name].astype(np.float64) for name in ("a", "b", "c", "d"))
    return ((a @ b) @ (c @ d),)


MM3 = Program(
    name="3mm", summary="G = (A B)(C D), three launches of one product kernel",
    source=MM3_SOURCE,
    sizes={"small": {"ni": 30, "nj": 34, "nk": 38, "nl": 42, "nm": 26},
           "default": {"ni": 480, "nj": 500, "nk": 520, "nl": 540, "nm": 460}},
    inputs=_mm3_inputs, run=_mm3_run, reference=_mm3_reference, tolerance=2e-4)

PROGRAMS = [GEMM, MM2, MM3]
