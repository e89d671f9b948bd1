"""Convolutions and image filters: a 3x3 2D convolution, a 3x3x3 3D convolution launched once
per plane, a Sobel edge filter after a grey-scale conversion, and a separable Gaussian blur
(row pass, column pass) with its weights in constant memory. Coefficients are double literals
multiplying float data, as in the GPU sources these imitate."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

CONV2D_SOURCE = """
__kernel void conv2d_kernel(__global float *A, __global float *B, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    float c11 = +0.2, c21 = +0.5, c31 = -0.8;
    float c12 = -0.3, c22 = +0.6, c32 = -0.9;
    float c13 = +0.4, c23 = +0.7, c33 = +0.10;

    if ((i < ni - 1) && (j < nj - 1) && (i > 0) && (j > 0)) {
        B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + j]
                      + c31 * A[(i - 1) * nj + (j + 1)]
                      + c12 * A[i * nj + (j - 1)] + c22 * A[i * nj + j]
                      + c32 * A[i * nj + (j + 1)]
                      + c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + j]
                      + c33 * A[(i + 1) * nj + (j + 1)];
    }
}
"""

CONV2D_WEIGHTS = np.array([[0.2, 0.5, -0.8], [-0.3, 0.6, -0.9], [0.4, 0.7, 0.10]])


def _conv2d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    ni, nj = size["ni"], size["nj"]
    return {"A": rng.random((ni, nj), dtype=np.float32),
            "B": np.zeros((ni, nj), dtype=np.float32)}


def _conv2d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    ni, nj = data.size["ni"], data.size["nj"]
    data.kernel("conv2d_kernel")(queue, (round_up(nj, 32), round_up(ni, 8)), (32, 8),
                                 data.buf["A"], data.buf["B"], np.int32(ni), np.int32(nj))
    return data.read(queue, "B")


def _conv2d_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    ni, nj = a.shape
    b = np.zeros((ni, nj))
    # Weight (row r, column c) of CONV2D_WEIGHTS applies to A[i + r - 1][j + c - 1].
    for r in range(3):
        for c in range(3):
            b[1:-1, 1:-1] += CONV2D_WEIGHTS[r, c] * a[r:ni - 2 + r, c:nj - 2 + c]
    return (b,)


CONV2D = Program(
    name="conv2d", summary="3x3 convolution, coefficients as double literals",
    source=CONV2D_SOURCE,
    sizes={"small": {"ni": 67, "nj": 95}, "default": {"ni": 4000, "nj": 4000}},
    inputs=_conv2d_inputs, run=_conv2d_run, reference=_conv2d_reference, tolerance=1e-5)


CONV3D_SOURCE = """
__kernel void conv3d_kernel(__global float *A, __global float *B, int ni, int nj, int nk, int i)
{
    int k = get_global_id(0);
    int j = get_global_id(1);

    float c11 = +2, c21 = +5, c31 = -8;
    float c12 = -3, c22 = +6, c32 = -9;
    float c13 = +4, c23 = +7, c33 = +10;

    if ((i < (ni - 1)) && (j < (nj - 1)) && (k < (nk - 1)) && (i > 0) && (j > 0) && (k > 0)) {
        B[i * (nk * nj) + j * nk + k] =
              c11 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c13 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c21 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c23 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c31 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c33 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c12 * A[(i + 0) * (nk * nj) + (j - 1) * nk + (k + 0)]
            + c22 * A[(i + 0) * (nk * nj) + (j + 0) * nk + (k + 0)]
            + c32 * A[(i + 0) * (nk * nj) + (j + 1) * nk + (k + 0)]
            + c11 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k + 1)]
            + c13 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k + 1)]
            + c21 * A[(i - 1) * (nk * nj) + (j + 0) * nk + (k + 1)]
            + c23 * A[(i + 1) * (nk * nj) + (j + 0) * nk + (k + 1)]
            + c31 * A[(i - 1) * (nk * nj) + (j + 1) * nk + (k + 1)]
            + c33 * A[(i + 1) * (nk * nj) + (j + 1) * nk + (k + 1)];
    }
}
"""

# (coefficient, di, dj, dk) of each term of conv3d_kernel, in its order.
CONV3D_TERMS = [
    (2, -1, -1, -1), (4, 1, -1, -1), (5, -1, -1, -1), (7, 1, -1, -1), (-8, -1, -1, -1),
    (10, 1, -1, -1), (-3, 0, -1, 0), (6, 0, 0, 0), (-9, 0, 1, 0), (2, -1, -1, 1),
    (4, 1, -1, 1), (5, -1, 0, 1), (7, 1, 0, 1), (-8, -1, 1, 1), (10, 1, 1, 1),
]


def _conv3d_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    shape = (size["ni"], size["nj"], size["nk"])
    return {"A": rng.random(shape, dtype=np.float32),
            "B": np.zeros(shape, dtype=np.float32)}


def _conv3d_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    ni, nj, nk = data.size["ni"], data.size["nj"], data.size["nk"]
    kernel = data.kernel("conv3d_kernel")
    for i in range(1, ni - 1):
        kernel(queue, (round_up(nk, 32), round_up(nj, 8)), (32, 8), data.buf["A"],
               data.buf["B"], np.int32(ni), np.int32(nj), np.int32(nk), np.int32(i))
    return data.read(queue, "B")


def _conv3d_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64)
    ni, nj, nk = a.shape
    b = np.zeros(a.shape)
    inner = b[1:-1, 1:-1, 1:-1]
    for weight, di, dj, dk in CONV3D_TERMS:
        inner += weight * a[1 + di:ni - 1 + di, 1 + dj:nj - 1 + dj, 1 + dk:nk - 1 + dk]
    return (b,)


CONV3D = Program(
    name="conv3d", summary="3x3x3 convolution, a 2D launch per plane from the host",
    source=CONV3D_SOURCE,
    sizes={"small": {"ni": 12, "nj": 20, "nk": 36}, "default": {"ni": 256, "nj": 256, "nk": 256}},
    inputs=_conv3d_inputs, run=_conv3d_run, reference=_conv3d_reference, tolerance=1e-5)


SOBEL_SOURCE = """
__kernel void grey(__global const float *rgb, __global float *luma, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    int p = (y * width + x) * 3;
    luma[y * width + x] = 0.299 * rgb[p] + 0.587 * rgb[p + 1] + 0.114 * rgb[p + 2];
}

__kernel void sobel(__global const float *luma, __global float *edges, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        edges[y * width + x] = 0.0f;
        return;
    }

    float gx = -luma[(y - 1) * width + x - 1] + luma[(y - 1) * width + x + 1]
             - 2.0 * luma[y * width + x - 1] + 2.0 * luma[y * width + x + 1]
             - luma[(y + 1) * width + x - 1] + luma[(y + 1) * width + x + 1];
    float gy = -luma[(y - 1) * width + x - 1] - 2.0 * luma[(y - 1) * width + x]
             - luma[(y - 1) * width + x + 1]
             + luma[(y + 1) * width + x - 1] + 2.0 * luma[(y + 1) * width + x]
             + luma[(y + 1) * width + x + 1];
    edges[y * width + x] = sqrt(gx * gx + gy * gy);
}
"""


def _sobel_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    height, width = size["height"], size["width"]
    return {"rgb": rng.random((height, width, 3), dtype=np.float32),
            "luma": np.zeros((height, width), dtype=np.float32),
            "edges": np.zeros((height, width), dtype=np.float32)}


def _sobel_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    height, width = data.size["height"], data.size["width"]
    grid = (round_up(width, 16), round_up(height, 16))
    args = (np.int32(width), np.int32(height))
    data.kernel("grey")(queue, grid, (16, 16), data.buf["rgb"], data.buf["luma"], *args)
    data.kernel("sobel")(queue, grid, (16, 16), data.buf["luma"], data.buf["edges"], *args)
    return data.read(queue, "edges")


def _sobel_reference(size: Size, inputs: Arrays) -> Result:
    rgb = inputs["rgb"].astype(np.float64)
    luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]

    def at(dy: int, dx: int) -> np.ndarray:
        h, w = luma.shape
        return luma[1 + dy:h - 1 + dy, 1 + dx:w - 1 + dx]

    gx = -at(-1, -1) + at(-1, 1) - 2 * at(0, -1) + 2 * at(0, 1) - at(1, -1) + at(1, 1)
    gy = -at(-1, -1) - 2 * at(-1, 0) - at(-1, 1) + at(1, -1) + 2 * at(1, 0) + at(1, 1)
    edges = np.zeros(luma.shape)
    edges[1:-1, 1:-1] = np.sqrt(gx * gx + gy * gy)
    return (edges,)


SOBEL = Program(
    name="sobel", summary="grey-scale conversion and Sobel magnitude, 16x16 groups",
    source=SOBEL_SOURCE,
    sizes={"small": {"height": 45, "width": 70}, "default": {"height": 3000, "width": 4000}},
    inputs=_sobel_inputs, run=_sobel_run, reference=_sobel_reference, tolerance=1e-5)


GAUSSIAN_SOURCE = """
__kernel void blur_rows(__global const float *src, __global float *dst,
                        __constant float *weights, int radius, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);

    if (x < width && y < height) {
        float sum = 0.0;
        for (int d = -radius; d <= radius; d++) {
            int xx = clamp(x + d, 0, width - 1);
            sum += weights[d + radius] * src[y * width + xx];
        }
        dst[y * width + x] = sum;
    }
}

__kernel void blur_columns(__global const float *src, __global float *dst,
                           __constant float *weights, int radius, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);

    if (x < width && y < height) {
        float sum = 0.0;
        for (int d = -radius; d <= radius; d++) {
            int yy = clamp(y + d, 0, height - 1);
            sum += weights[d + radius] * src[yy * width + x];
        }
        dst[y * width + x] = sum;
    }
}
"""


def _gaussian_weights(radius: int) -> np.ndarray:
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    weights = np.exp(-0.5 * (offsets / (radius / 2.0)) ** 2)
    return (weights / weights.sum()).astype(np.float32)


def _gaussian_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    height, width = size["height"], size["width"]
    return {"image": rng.random((height, width), dtype=np.float32),
            "weights": _gaussian_weights(size["radius"]),
            "tmp": np.zeros((height, width), dtype=np.float32),
            "out": np.zeros((height, width), dtype=np.float32)}


def _gaussian_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    height, width, radius = data.size["height"], data.size["width"], data.size["radius"]
    buf = data.buf
    args = (np.int32(radius), np.int32(width), np.int32(height))
    data.kernel("blur_rows")(queue, (width, height), None, buf["image"], buf["tmp"],
                             buf["weights"], *args)
    data.kernel("blur_columns")(queue, (width, height), None, buf["tmp"], buf["out"],
                                buf["weights"], *args)
    return data.read(queue, "out")


def _gaussian_reference(size: Size, inputs: Arrays) -> Result:
    image = inputs["image"].astype(np.float64)
    weights = inputs["weights"].astype(np.float64)
    radius = size["radius"]
    padded = np.pad(image, ((0, 0), (radius, radius)), mode="edge")
    rows = sum(w * padded[:, d:d + image.shape[1]] for d, w in enumerate(weights))
    padded = np.pad(rows, ((radius, radius), (0, 0)), mode="edge")
    return (sum(w * padded[d:d + image.shape[0], :] for d, w in enumerate(weights)),)


GAUSSIAN = Program(
    name="gaussian", summary="separable Gaussian blur, weights in __constant, local size None",
    source=GAUSSIAN_SOURCE,
    sizes={"small": {"height": 50, "width": 61, "radius": 3},
           "default": {"height": 2048, "width": 3000, "radius": 7}},
    inputs=_gaussian_inputs, run=_gaussian_run, reference=_gaussian_reference, tolerance=1e-5)

PROGRAMS = [CONV2D, CONV3D, SOBEL, GAUSSIAN]
