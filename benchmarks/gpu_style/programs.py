"""The GPU-style programs of the host-fusion benchmark: what each computes, its sizes, inputs,
host function and numpy reference. The kernels are the ``.cl`` files beside this module.

Each host function is written against PyOpenCL's API (``cl`` is ``ppcl`` or ``pyopencl``), as
a GPU programmer writes it: buffers made from host arrays with ``COPY_HOST_PTR`` (by ``Data``),
inputs a run changes copied in again with ``enqueue_copy``, arguments set, a launch per time
step or frame, results read back. References are float64 numpy; each program's ``tolerance``
(largest difference over the reference's largest magnitude) says why it is what it is.

Sizes: "small" is awkward (no dimension a multiple of 16 or 128) for the tests, "quick" a few
milliseconds a run, "default" 5-100 ms a run on two cores.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

HERE = Path(__file__).parent
i32, f32 = np.int32, np.float32


def _source(name: str) -> str:
    return (HERE / name).read_text()


# --- 1. neighbour-list molecular dynamics ------------------------------------------------------

MD_JITTER = 0.04  # lattice distances 1, sqrt 2, sqrt 3, 2 stay apart: no pair near the cut-off
MD_CUTOFF = 1.56  # between the farthest sqrt-2 pair (1.53) and the nearest sqrt-3 pair (1.59)
MD_LJ = 12.0  # lj1 = lj2: the potential's minimum at distance 1, the lattice spacing
MD_DT = 0.002
MD_LATTICE_NEIGHBOURS = 26


def _md_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    dims = np.array([size["nx"], size["ny"], size["nz"]])
    n = int(dims.prod())
    grid = np.stack(np.meshgrid(*(np.arange(d) for d in dims), indexing="ij"), -1).reshape(-1, 3)
    lattice = grid + rng.uniform(-MD_JITTER, MD_JITTER, (n, 3))

    def index(g: np.ndarray) -> np.ndarray:
        return (g[:, 0] * dims[1] + g[:, 1]) * dims[2] + g[:, 2]

    offsets = [o for o in itertools.product((-1, 0, 1), repeat=3) if o != (0, 0, 0)]
    near = [index((grid + np.array(o)) % dims) for o in offsets]  # wrapped: far at the edges
    far = rng.integers(0, n - 1, (size["neighbours"] - MD_LATTICE_NEIGHBOURS, n))
    far += far >= np.arange(n)  # never the atom itself
    neigh = np.vstack([*near, far])
    # Atoms in random order, as a simulation's are after a while: the gathers are irregular.
    order = rng.permutation(n)
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    pos = np.zeros((n, 4), np.float32)
    pos[:, :3] = lattice[order]
    return {"pos": pos, "vel": np.zeros((n, 4), np.float32),
            "force": np.zeros((n, 4), np.float32),
            "neigh": np.ascontiguousarray(rank[neigh[:, order]], dtype=np.int32)}


def _md_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf, n = data.buf, data.host["pos"].shape[0]
    data.restore(queue, "pos", "vel")
    force, integrate = data.kernel("lj_force"), data.kernel("integrate")
    force.set_args(buf["pos"], buf["neigh"], buf["force"], i32(n), i32(data.size["neighbours"]),
                   f32(MD_CUTOFF ** 2), f32(MD_LJ), f32(MD_LJ))
    integrate.set_args(buf["pos"], buf["vel"], buf["force"], i32(n), f32(MD_DT))
    global_size = (round_up(n, 128),)
    for _ in range(data.size["steps"]):
        cl.enqueue_nd_range_kernel(queue, force, global_size, (128,))
        cl.enqueue_nd_range_kernel(queue, integrate, global_size, (128,))
    return data.read(queue, "pos", "force")


def _md_reference(size: Size, inputs: Arrays) -> Result:
    pos = inputs["pos"].astype(np.float64)
    vel = np.zeros_like(pos)
    force = np.zeros_like(pos)
    neigh = inputs["neigh"]
    for _ in range(size["steps"]):
        d = pos[None, :, :3] - pos[neigh, :3]
        r2 = (d * d).sum(axis=2)
        r2inv = np.where(r2 < MD_CUTOFF ** 2, 1.0 / r2, 0.0)
        r6inv = r2inv ** 3
        force[:, :3] = (d * (r2inv * r6inv * (MD_LJ * r6inv - MD_LJ))[..., None]).sum(axis=0)
        vel += MD_DT * force
        pos += MD_DT * vel
    return pos, force


MD = Program(
    name="md", summary="neighbour-list Lennard-Jones forces (SHOC md), neighbour-major list",
    source=_source("md.cl"),
    sizes={"small": {"nx": 7, "ny": 9, "nz": 11, "neighbours": 32, "steps": 3},
           "quick": {"nx": 24, "ny": 24, "nz": 24, "neighbours": 32, "steps": 4},
           "default": {"nx": 32, "ny": 32, "nz": 32, "neighbours": 32, "steps": 8}},
    inputs=_md_inputs, run=_md_run, reference=_md_reference,
    # Coordinates up to 32 are rounded to ~2e-6 in float32, and the Lennard-Jones force near
    # its minimum changes by ~200 per unit of distance: forces differ from float64 by up to
    # ~1e-4 of the largest one (9e-5 measured at the default size). Positions: ~2e-7.
    tolerance=5e-4)


# --- 2. array-of-structures particle update ----------------------------------------------------

PARTICLE_DT, PARTICLE_SOFT, PARTICLE_DRAG = 0.01, 0.05, 0.2


def _particles_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n, k = size["particles"], size["attractors"]
    p = np.zeros((n, 8), np.float32)
    p[:, 0:3] = rng.uniform(-1.0, 1.0, (n, 3))
    p[:, 3:6] = rng.normal(0.0, 0.1, (n, 3))
    p[:, 6] = rng.uniform(0.5, 2.0, n)
    attractors = np.empty((k, 4), np.float32)
    attractors[:, :3] = rng.uniform(-1.0, 1.0, (k, 3))
    attractors[:, 3] = rng.uniform(0.05, 0.2, k)
    return {"p": p, "attractors": attractors}


def _particles_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf = data.buf
    n, k = data.size["particles"], data.size["attractors"]
    data.restore(queue, "p")
    advance = data.kernel("advance")
    for _ in range(data.size["steps"]):
        advance(queue, (round_up(n, 64),), (64,), buf["p"], buf["attractors"], i32(n), i32(k),
                f32(PARTICLE_DT), f32(PARTICLE_SOFT), f32(PARTICLE_DRAG))
    return data.read(queue, "p")


def _particles_reference(size: Size, inputs: Arrays) -> Result:
    p = inputs["p"].astype(np.float64)
    x, v, m = p[:, 0:3].T.copy(), p[:, 3:6].T.copy(), p[:, 6]  # coordinate-major: fast numpy
    for _ in range(size["steps"]):
        acc = np.zeros_like(x)
        for a in inputs["attractors"].astype(np.float64):
            d = a[:3, None] - x
            r2 = (d * d).sum(axis=0) + PARTICLE_SOFT
            acc += d * (a[3] / (r2 * np.sqrt(r2)))
        v += PARTICLE_DT * (acc - PARTICLE_DRAG / m * v)
        x += PARTICLE_DT * v
    p[:, 0:3], p[:, 3:6] = x.T, v.T
    return (p,)


PARTICLES = Program(
    name="particles", summary="array-of-structures particle update (8 floats a particle)",
    source=_source("particles.cl"),
    sizes={"small": {"particles": 1000, "attractors": 7, "steps": 4},
           "quick": {"particles": 1 << 16, "attractors": 16, "steps": 8},
           "default": {"particles": 1 << 17, "attractors": 16, "steps": 16}},
    inputs=_particles_inputs, run=_particles_run, reference=_particles_reference,
    # A few float32 operations per step on values of order 1, over at most 16 steps.
    tolerance=1e-5)


# --- 3. lattice-Boltzmann D2Q9, cell-major -----------------------------------------------------

LBM_CX = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1])
LBM_CY = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
LBM_OPP = np.array([0, 3, 4, 1, 2, 7, 8, 5, 6])
LBM_W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
LBM_OMEGA = 1.2


def _lbm_equilibrium(rho: np.ndarray, ux: np.ndarray, uy: np.ndarray) -> np.ndarray:
    """The equilibrium distributions, direction first: shape (9, *rho.shape)."""
    cx, cy, w = (c.reshape(9, *([1] * rho.ndim)) for c in (LBM_CX, LBM_CY, LBM_W))
    cu = 3.0 * (cx * ux + cy * uy)
    return w * rho * (1.0 + cu + 0.5 * cu * cu - 1.5 * (ux * ux + uy * uy))


def _lbm_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    nx, ny = size["nx"], size["ny"]
    y, x = np.mgrid[0:ny, 0:nx]
    rho = 1.0 + 0.01 * rng.standard_normal((ny, nx))
    ux = 0.05 * np.sin(2 * np.pi * y / ny)
    uy = 0.02 * np.sin(2 * np.pi * x / nx)
    solid = ((x - nx / 4) ** 2 + (y - ny / 2) ** 2 < (ny / 8) ** 2).astype(np.uint8)
    f = _lbm_equilibrium(rho, ux, uy).transpose(1, 2, 0)  # (ny, nx, 9): f[cell * 9 + q]
    f = np.ascontiguousarray(f, dtype=np.float32)
    return {"f": f, "g": np.zeros_like(f), "solid": solid}


def _lbm_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf, nx, ny = data.buf, data.size["nx"], data.size["ny"]
    data.restore(queue, "f")
    step = data.kernel("lbm_step")
    src, dst = "f", "g"
    for _ in range(data.size["steps"]):
        step(queue, (round_up(nx, 16), round_up(ny, 16)), (16, 16), buf[src], buf[dst],
             buf["solid"], i32(nx), i32(ny), f32(LBM_OMEGA))
        src, dst = dst, src
    return data.read(queue, src)


def _lbm_reference(size: Size, inputs: Arrays) -> Result:
    f = inputs["f"].transpose(2, 0, 1).astype(np.float64)  # direction-major: fast numpy
    solid = inputs["solid"].astype(bool)
    cx, cy = LBM_CX.reshape(9, 1, 1), LBM_CY.reshape(9, 1, 1)
    for _ in range(size["steps"]):
        pulled = np.stack([np.roll(f[q], (LBM_CY[q], LBM_CX[q]), axis=(0, 1))
                           for q in range(9)])
        rho = pulled.sum(axis=0)
        ux = (pulled * cx).sum(axis=0) / rho
        uy = (pulled * cy).sum(axis=0) / rho
        collided = pulled + LBM_OMEGA * (_lbm_equilibrium(rho, ux, uy) - pulled)
        f = np.where(solid, pulled[LBM_OPP], collided)
    return (f.transpose(1, 2, 0),)


LBM = Program(
    name="lbm", summary="D2Q9 lattice-Boltzmann steps, cell-major f[cell*9+q] (Parboil base)",
    source=_source("lbm.cl"),
    sizes={"small": {"nx": 37, "ny": 29, "steps": 5},
           "quick": {"nx": 384, "ny": 384, "steps": 4},
           "default": {"nx": 768, "ny": 768, "steps": 8}},
    inputs=_lbm_inputs, run=_lbm_run, reference=_lbm_reference,
    # About 30 float32 operations a value a step, values below 0.5, the relaxation stable.
    tolerance=1e-5)


# --- 4. feature-major k-means ------------------------------------------------------------------

def _kmeans_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n, k, nf = size["points"], size["clusters"], size["features"]
    centres = rng.random((k, nf)) * 10.0
    labels = rng.integers(0, k, n)
    # Blobs far apart (at 34 features centres ~24 apart, points ~3 from theirs), a start near every
    # centre: no point is ever nearly equidistant from two centres, so memberships are exact.
    points = centres[labels] + rng.normal(0.0, 0.5, (n, nf))
    return {"points": points.astype(np.float32),
            "features": np.zeros((nf, n), np.float32),
            "clusters": np.zeros((k, nf), np.float32),
            "start": (centres + rng.normal(0.0, 0.5, (k, nf))).astype(np.float32),
            "membership": np.zeros(n, np.int32)}


def _kmeans_centres(points: np.ndarray, membership: np.ndarray,
                    centres: np.ndarray) -> np.ndarray:
    """The host's update (as Rodinia's): each centre the mean of its points, in float64; a
    centre without points stays. The sums are one product with the membership's one-hot
    matrix, a few milliseconds where a loop over clusters or features takes several times
    that."""
    k = centres.shape[0]
    one_hot = np.zeros((k, membership.size))
    one_hot[membership, np.arange(membership.size)] = 1.0
    counts = one_hot.sum(axis=1)
    sums = one_hot @ points
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], centres)


def _kmeans_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf = data.buf
    n, k, nf = data.size["points"], data.size["clusters"], data.size["features"]
    global_size, local_size = (round_up(n, 256),), (256,)
    data.kernel("kmeans_swap")(queue, global_size, local_size, buf["points"], buf["features"],
                               i32(n), i32(nf))
    assign = data.kernel("kmeans_assign")
    centres = data.host["start"].astype(np.float64)
    membership = np.empty(n, np.int32)
    for _ in range(data.size["iterations"]):
        cl.enqueue_copy(queue, buf["clusters"], centres.astype(np.float32))
        assign(queue, global_size, local_size, buf["features"], buf["clusters"],
               buf["membership"], i32(n), i32(k), i32(nf))
        cl.enqueue_copy(queue, membership, buf["membership"])
        centres = _kmeans_centres(data.host["points"], membership, centres)
    return membership, centres


def _kmeans_reference(size: Size, inputs: Arrays) -> Result:
    points = inputs["points"].astype(np.float64)
    centres = inputs["start"].astype(np.float64)
    membership = np.empty(points.shape[0], np.int32)
    for _ in range(size["iterations"]):
        # |p - c|^2 = |p|^2 - 2 p.c + |c|^2: one matrix product instead of a points x clusters
        # x features array.
        distances = ((points * points).sum(axis=1)[:, None] - 2.0 * points @ centres.T
                     + (centres.T * centres.T).sum(axis=0))
        membership = np.argmin(distances, axis=1).astype(np.int32)
        centres = _kmeans_centres(points, membership, centres)
    return membership, centres


KMEANS = Program(
    name="kmeans", summary="k-means (Rodinia): swap to feature-major, assign, host update",
    source=_source("kmeans.cl"),
    sizes={"small": {"points": 1001, "clusters": 5, "features": 7, "iterations": 3},
           "quick": {"points": 1 << 14, "clusters": 16, "features": 34, "iterations": 3},
           "default": {"points": 60000, "clusters": 16, "features": 34, "iterations": 5}},
    inputs=_kmeans_inputs, run=_kmeans_run, reference=_kmeans_reference,
    # Memberships must be equal (any difference is >= 1, far above the bound); the centres
    # are float64 means of float32 points, computed alike on both sides.
    tolerance=1e-6)


# --- 5. ELL sparse matrix-vector product -------------------------------------------------------

def _spmv_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n, width, band = size["rows"], size["width"], size["band"]
    rows = np.arange(n)
    lengths = rng.integers(width // 4, width + 1, n)
    present = np.arange(width)[:, None] < lengths[None, :]
    cols = (rows + rng.integers(-band, band + 1, (width, n))) % n  # banded, as from a mesh
    vals = rng.uniform(-1.0, 1.0, (width, n)) * present
    vals *= 0.9 / np.abs(vals).sum(axis=0)  # row sums of |a| 0.9: x <- b + A x converges
    cols = np.where(present, cols, rows)  # padding: a zero on the diagonal
    return {"vals": vals.astype(np.float32), "cols": cols.astype(np.int32),
            "b": rng.uniform(-1.0, 1.0, n).astype(np.float32),
            "x": rng.uniform(-1.0, 1.0, n).astype(np.float32),
            "y": np.zeros(n, np.float32)}


def _spmv_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf, n, width = data.buf, data.size["rows"], data.size["width"]
    data.restore(queue, "x")
    spmv = data.kernel("spmv_ell")
    src, dst = "x", "y"
    for _ in range(data.size["iterations"]):
        spmv(queue, (round_up(n, 128),), (128,), buf["vals"], buf["cols"], buf[src], buf["b"],
             buf[dst], i32(n), i32(width))
        src, dst = dst, src
    return data.read(queue, src)


def _spmv_reference(size: Size, inputs: Arrays) -> Result:
    vals, cols = inputs["vals"].astype(np.float64), inputs["cols"]
    b, x = inputs["b"].astype(np.float64), inputs["x"].astype(np.float64)
    for _ in range(size["iterations"]):
        x = b + (vals * x[cols]).sum(axis=0)
    return (x,)


SPMV = Program(
    name="spmv_ell", summary="ELL sparse matrix-vector, coalesced vals[j*nrows+row], iterated",
    source=_source("spmv_ell.cl"),
    sizes={"small": {"rows": 1003, "width": 13, "band": 50, "iterations": 4},
           "quick": {"rows": 1 << 16, "width": 24, "band": 2000, "iterations": 4},
           "default": {"rows": 1 << 18, "width": 24, "band": 4000, "iterations": 8}},
    inputs=_spmv_inputs, run=_spmv_run, reference=_spmv_reference,
    # Sums of at most 24 float32 products, |row| <= 0.9: errors stay near float32 rounding.
    tolerance=1e-5)


# --- 6. per-column setup along y ---------------------------------------------------------------

def _calibrate_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    w, h, degree = size["width"], size["height"], size["degree"]
    factorials = np.cumprod(np.r_[1.0, np.arange(1, degree)])
    gain = rng.uniform(-1.0, 1.0, degree) / factorials
    gain[0] += 1.0
    return {"frames": rng.uniform(0.0, 4095.0, (size["frames"], h, w)).astype(np.float32),
            "temperature": rng.uniform(0.0, 1.0, w).astype(np.float32),
            "gain_coef": gain.astype(np.float32),
            "offset_coef": (rng.uniform(-10.0, 10.0, degree) / factorials).astype(np.float32),
            "raw": np.zeros((h, w), np.float32), "calibrated": np.zeros((h, w), np.float32)}


def _calibrate_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf = data.buf
    w, h, degree = data.size["width"], data.size["height"], data.size["degree"]
    frames = data.host["frames"]
    out = np.empty_like(frames)
    calibrate = data.kernel("calibrate")
    calibrate.set_args(buf["raw"], buf["calibrated"], buf["temperature"], buf["gain_coef"],
                       buf["offset_coef"], i32(w), i32(h), i32(degree))
    for k in range(frames.shape[0]):
        cl.enqueue_copy(queue, buf["raw"], frames[k])
        cl.enqueue_nd_range_kernel(queue, calibrate, (round_up(w, 16), round_up(h, 16)),
                                   (16, 16))
        cl.enqueue_copy(queue, out[k], buf["calibrated"])
    return (out,)


def _calibrate_reference(size: Size, inputs: Arrays) -> Result:
    t = inputs["temperature"].astype(np.float64)
    gain = np.polynomial.polynomial.polyval(t, inputs["gain_coef"].astype(np.float64))
    offset = np.polynomial.polynomial.polyval(t, inputs["offset_coef"].astype(np.float64))
    return (inputs["frames"] * gain + offset,)


CALIBRATE = Program(
    name="calibrate", summary="2-D per-pixel kernel, each item evaluates its column's "
                              "degree-48 polynomials (uniform along y)",
    source=_source("column_setup.cl"),
    sizes={"small": {"width": 67, "height": 45, "degree": 40, "frames": 2},
           "quick": {"width": 512, "height": 512, "degree": 64, "frames": 4},
           "default": {"width": 1024, "height": 1024, "degree": 64, "frames": 6}},
    inputs=_calibrate_inputs, run=_calibrate_run, reference=_calibrate_reference,
    # Horner's rule on [0, 1] with factorial-damped coefficients is well conditioned.
    tolerance=1e-6)


# --- 7. RGBA float4 tone mapping ---------------------------------------------------------------

TONEMAP_WHITE2, TONEMAP_GAMMA, TONEMAP_SATURATION = 4.0, 2.2, 0.8


def _tonemap_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    w, h = size["width"], size["height"]
    frames = np.exp(rng.normal(-0.5, 1.5, (size["frames"], h, w, 4)))
    frames[..., 3] = rng.uniform(0.0, 1.0, (size["frames"], h, w))
    return {"frames": frames.astype(np.float32), "hdr": np.zeros((h, w, 4), np.float32),
            "ldr": np.zeros((h, w, 4), np.float32)}


def _exposure(frame: int) -> float:
    return 0.5 * 1.5 ** frame


def _tonemap_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf, w, h = data.buf, data.size["width"], data.size["height"]
    frames = data.host["frames"]
    out = np.empty_like(frames)
    tonemap = data.kernel("tonemap")
    for k in range(frames.shape[0]):
        cl.enqueue_copy(queue, buf["hdr"], frames[k])
        tonemap(queue, (round_up(w, 16), round_up(h, 16)), (16, 16), buf["hdr"], buf["ldr"],
                i32(w), i32(h), f32(_exposure(k)), f32(TONEMAP_WHITE2), f32(1 / TONEMAP_GAMMA),
                f32(TONEMAP_SATURATION))
        cl.enqueue_copy(queue, out[k], buf["ldr"])
    return (out,)


def _tonemap_reference(size: Size, inputs: Arrays) -> Result:
    frames = inputs["frames"].astype(np.float64)
    out = np.empty_like(frames)
    for k in range(frames.shape[0]):
        c = frames[k] * np.float64(np.float32(_exposure(k)))
        lum = 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]
        mapped = lum * (1.0 + lum / TONEMAP_WHITE2) / (1.0 + lum)
        scale = mapped / np.maximum(lum, 1e-6)
        toned = mapped[..., None] + TONEMAP_SATURATION * (c[..., :3] * scale[..., None]
                                                          - mapped[..., None])
        out[k, ..., :3] = np.clip(toned, 0.0, 1.0) ** np.float64(np.float32(1 / TONEMAP_GAMMA))
        out[k, ..., 3] = frames[k, ..., 3]
    return (out,)


TONEMAP = Program(
    name="tonemap", summary="Reinhard tone mapping, RGBA float4 pixels, a launch per frame",
    source=_source("tonemap.cl"),
    sizes={"small": {"width": 53, "height": 35, "frames": 2},
           "quick": {"width": 512, "height": 384, "frames": 2},
           "default": {"width": 1024, "height": 768, "frames": 3}},
    inputs=_tonemap_inputs, run=_tonemap_run, reference=_tonemap_reference,
    # Outputs in [0, 1]; pow's few-ulp error and the float32 operations before it. Near 0
    # x^(1/2.2) magnifies relative error by 1/2.2 only.
    tolerance=1e-5)


# --- 8. column-major gemv ----------------------------------------------------------------------

def _gemv_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    # Column j of A is row j of the array: A[j * n + i] is element (i, j). Entries of variance
    # 0.25 / n give a spectral radius near 0.5, so the iteration converges.
    a = rng.uniform(-1.0, 1.0, (n, n)) * np.sqrt(0.75 / n)
    return {"A": a.astype(np.float32), "x": rng.uniform(-1.0, 1.0, n).astype(np.float32),
            "b": rng.uniform(-1.0, 1.0, n).astype(np.float32), "y": np.zeros(n, np.float32)}


def _gemv_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf, n = data.buf, data.size["n"]
    data.restore(queue, "x")
    gemv = data.kernel("gemv_colmajor")
    src, dst = "x", "y"
    for _ in range(data.size["iterations"]):
        gemv(queue, (round_up(n, 64),), (64,), buf["A"], buf[src], buf["b"], buf[dst], i32(n),
             i32(n))
        src, dst = dst, src
    return data.read(queue, src)


def _gemv_reference(size: Size, inputs: Arrays) -> Result:
    a = inputs["A"].astype(np.float64).T
    x, b = inputs["x"].astype(np.float64), inputs["b"].astype(np.float64)
    for _ in range(size["iterations"]):
        x = a @ x + b
    return (x,)


GEMV = Program(
    name="gemv_colmajor", summary="column-major gemv A[j*m+i], one item per row, iterated",
    source=_source("gemv_colmajor.cl"),
    sizes={"small": {"n": 301, "iterations": 4},
           "quick": {"n": 2048, "iterations": 4},
           "default": {"n": 3072, "iterations": 10}},
    inputs=_gemv_inputs, run=_gemv_run, reference=_gemv_reference,
    # Sums of n float32 products of random sign: rounding grows like sqrt(n) ulps.
    tolerance=1e-5)


# --- 9. per-column window along y -------------------------------------------------------------

def _overscan_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    w, h, dark = size["width"], size["height"], size["dark"]
    bias = rng.uniform(100.0, 300.0, w)  # per-column bias, as a readout amplifier leaves it
    frames = bias + rng.uniform(0.0, 3000.0, (size["frames"], dark + h, w))
    frames[:, :dark] = bias + rng.normal(0.0, 5.0, (size["frames"], dark, w))
    return {"frames": frames.round().astype(np.uint16),
            "flat": rng.uniform(0.9, 1.1, (h, w)).astype(np.float32),
            "raw": np.zeros((dark + h, w), np.uint16),
            "corrected": np.zeros((h, w), np.float32)}


def _overscan_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    buf = data.buf
    w, h, dark = data.size["width"], data.size["height"], data.size["dark"]
    frames = data.host["frames"]
    out = np.empty((frames.shape[0], h, w), np.float32)
    overscan = data.kernel("overscan")
    for k in range(frames.shape[0]):
        cl.enqueue_copy(queue, buf["raw"], frames[k])
        overscan(queue, (round_up(w, 32), round_up(h, 8)), (32, 8), buf["raw"],
                 buf["corrected"], buf["flat"], i32(w), i32(h), i32(dark))
        cl.enqueue_copy(queue, out[k], buf["corrected"])
    return (out,)


def _overscan_reference(size: Size, inputs: Arrays) -> Result:
    frames = inputs["frames"].astype(np.float64)
    dark = size["dark"]
    bias = frames[:, :dark].mean(axis=1, keepdims=True)
    return ((frames[:, dark:] - bias) * inputs["flat"],)


OVERSCAN = Program(
    name="overscan", summary="2-D per-pixel kernel, each item averages its column's dark "
                             "rows (uniform along y)",
    source=_source("overscan.cl"),
    sizes={"small": {"width": 75, "height": 37, "dark": 9, "frames": 2},
           "quick": {"width": 1024, "height": 768, "dark": 32, "frames": 2},
           "default": {"width": 2000, "height": 1500, "dark": 32, "frames": 4}},
    inputs=_overscan_inputs, run=_overscan_run, reference=_overscan_reference,
    # The bias sums are exact in float32 (integers below 2^24); a division, a subtraction
    # and a product of float32 values remain.
    tolerance=1e-6)


PROGRAMS: list[Program] = [MD, PARTICLES, LBM, KMEANS, SPMV, CALIBRATE, TONEMAP, GEMV,
                           OVERSCAN]
