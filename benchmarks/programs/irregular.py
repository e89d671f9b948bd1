"""Programs whose host loop depends on the data: k-means (assign and update kernels until no
point changes cluster), breadth-first search over a CSR graph (level-synchronous, until no node
is added) and a Needleman-Wunsch alignment score (one launch per anti-diagonal)."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.programs.program import Arrays, Data, Program, Result, Size, round_up

KMEANS_SOURCE = """
/* features are stored feature-major: feature l of point p at features[l * npoints + p]. */
__kernel void kmeans_assign(__global const float *features, __global const float *clusters,
                            __global int *membership, int npoints, int nclusters, int nfeatures)
{
    unsigned int point_id = get_global_id(0);
    int index = 0;

    if (point_id < npoints) {
        float min_dist = FLT_MAX;
        for (int i = 0; i < nclusters; i++) {
            float dist = 0;
            for (int l = 0; l < nfeatures; l++) {
                float diff = features[l * npoints + point_id] - clusters[i * nfeatures + l];
                dist += diff * diff;
            }
            if (dist < min_dist) {
                min_dist = dist;
                index = i;
            }
        }
        membership[point_id] = index;
    }
}

/* One work-item per (cluster, feature) scans every point. */
__kernel void kmeans_update(__global const float *features, __global const int *membership,
                            __global float *clusters, int npoints, int nclusters, int nfeatures)
{
    int c = get_global_id(0);
    int l = get_global_id(1);
    if (c >= nclusters || l >= nfeatures)
        return;

    float sum = 0.0;
    int count = 0;
    for (int p = 0; p < npoints; p++) {
        if (membership[p] == c) {
            sum += features[l * npoints + p];
            count++;
        }
    }
    if (count > 0)
        clusters[c * nfeatures + l] = sum / count;
}
"""


def _kmeans_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    npoints, nclusters, nfeatures = size["points"], size["clusters"], size["features"]
    centres = rng.random((nclusters, nfeatures)) * 10.0
    labels = rng.integers(0, nclusters, npoints)
    labels[:nclusters] = np.arange(nclusters)  # start from one point of every blob
    points = centres[labels] + rng.normal(0.0, 0.6, (npoints, nfeatures))
    return {
        "features": np.ascontiguousarray(points.T, dtype=np.float32),
        "clusters": points[:nclusters].astype(np.float32),
        "membership": np.full(npoints, -1, dtype=np.int32),
    }


def _kmeans_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    npoints, nclusters, nfeatures = (data.size[key] for key in ("points", "clusters",
                                                                 "features"))
    buf = data.buf
    sizes = (np.int32(npoints), np.int32(nclusters), np.int32(nfeatures))
    data.restore(queue, "clusters")
    membership = data.host["membership"].copy()
    previous = membership.copy()
    for _ in range(data.size["iterations"]):
        data.kernel("kmeans_assign")(queue, (round_up(npoints, 256),), (256,), buf["features"],
                                     buf["clusters"], buf["membership"], *sizes)
        data.kernel("kmeans_update")(queue, (nclusters, nfeatures), None, buf["features"],
                                     buf["membership"], buf["clusters"], *sizes)
        cl.enqueue_copy(queue, membership, buf["membership"])
        if np.array_equal(membership, previous):
            break
        previous[:] = membership
    (clusters,) = data.read(queue, "clusters")
    return (clusters, membership.astype(np.float64))


def _kmeans_reference(size: Size, inputs: Arrays) -> Result:
    points = inputs["features"].T.astype(np.float64)
    clusters = inputs["clusters"].astype(np.float64)
    previous = inputs["membership"].copy()
    membership = previous
    for _ in range(size["iterations"]):
        distances = ((points[:, None, :] - clusters[None, :, :]) ** 2).sum(axis=2)
        membership = np.argmin(distances, axis=1).astype(np.int32)
        for c in range(clusters.shape[0]):
            members = points[membership == c]
            if len(members):
                clusters[c] = members.mean(axis=0)
        if np.array_equal(membership, previous):
            break
        previous = membership
    return (clusters, membership.astype(np.float64))


KMEANS = Program(
    name="kmeans", summary="k-means: assign and update kernels until no point moves",
    source=KMEANS_SOURCE,
    sizes={"small": {"points": 2000, "clusters": 5, "features": 4, "iterations": 20},
           "default": {"points": 1 << 17, "clusters": 16, "features": 16, "iterations": 20}},
    inputs=_kmeans_inputs, run=_kmeans_run, reference=_kmeans_reference, tolerance=2e-3)


BFS_SOURCE = """
__kernel void bfs_kernel1(__global const int *row_offsets, __global const int *columns,
                          __global uchar *mask, __global uchar *updating,
                          __global const uchar *visited, __global int *cost, int n)
{
    int tid = get_global_id(0);

    if (tid < n && mask[tid]) {
        mask[tid] = 0;
        for (int e = row_offsets[tid]; e < row_offsets[tid + 1]; e++) {
            int id = columns[e];
            if (!visited[id]) {
                cost[id] = cost[tid] + 1;
                updating[id] = 1;
            }
        }
    }
}

__kernel void bfs_kernel2(__global uchar *mask, __global uchar *updating,
                          __global uchar *visited, __global int *over, int n)
{
    int tid = get_global_id(0);
    if (tid >= n)
        return;

    if (updating[tid]) {
        mask[tid] = 1;
        visited[tid] = 1;
        *over = 1;
        updating[tid] = 0;
    }
}
"""


def _bfs_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["nodes"]
    degrees = rng.integers(1, size["max_degree"] + 1, n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(degrees, out=offsets[1:])
    columns = rng.integers(0, n, int(offsets[-1])).astype(np.int32)
    start = np.zeros(n, dtype=np.uint8)
    start[0] = 1
    cost = np.full(n, -1, dtype=np.int32)
    cost[0] = 0
    return {
        "row_offsets": offsets, "columns": columns,
        "mask": start, "updating": np.zeros(n, dtype=np.uint8), "visited": start.copy(),
        "cost": cost, "over": np.zeros(1, dtype=np.int32),
    }


def _bfs_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["nodes"]
    buf = data.buf
    data.restore(queue, "mask", "updating", "visited", "cost")
    grid = (round_up(n, 256),)
    over = np.zeros(1, dtype=np.int32)
    while True:
        over[0] = 0
        cl.enqueue_copy(queue, buf["over"], over)
        data.kernel("bfs_kernel1")(queue, grid, (256,), buf["row_offsets"], buf["columns"],
                                   buf["mask"], buf["updating"], buf["visited"], buf["cost"],
                                   np.int32(n))
        data.kernel("bfs_kernel2")(queue, grid, (256,), buf["mask"], buf["updating"],
                                   buf["visited"], buf["over"], np.int32(n))
        cl.enqueue_copy(queue, over, buf["over"])
        if not over[0]:
            break
    return data.read(queue, "cost")


def _bfs_reference(size: Size, inputs: Arrays) -> Result:
    offsets, columns = inputs["row_offsets"], inputs["columns"]
    n = size["nodes"]
    sources = np.repeat(np.arange(n), np.diff(offsets))
    cost = inputs["cost"].copy()
    frontier = inputs["mask"].astype(bool)
    level = 0
    while frontier.any():
        reached = columns[frontier[sources]]
        reached = np.unique(reached[cost[reached] < 0])
        level += 1
        cost[reached] = level
        frontier = np.zeros(n, dtype=bool)
        frontier[reached] = True
    return (cost,)


BFS = Program(
    name="bfs", summary="level-synchronous BFS over CSR, host loop until no change",
    source=BFS_SOURCE,
    sizes={"small": {"nodes": 3000, "max_degree": 4},
           "default": {"nodes": 1 << 20, "max_degree": 10}},
    inputs=_bfs_inputs, run=_bfs_run, reference=_bfs_reference, tolerance=0.0)


NW_SOURCE = """
/* Cells (i, d - i) of anti-diagonal d, i from first_i; the first row and column hold the gap
   penalties. */
__kernel void nw_diagonal(__global int *score, __global const int *reference, int d,
                          int first_i, int count, int cols, int penalty)
{
    int t = get_global_id(0);
    if (t >= count)
        return;

    int i = first_i + t;
    int j = d - i;
    int index = i * cols + j;
    int diagonal = score[index - cols - 1] + reference[index];
    int left = score[index - 1] - penalty;
    int up = score[index - cols] - penalty;
    score[index] = max(diagonal, max(left, up));
}
"""

NW_PENALTY = 10


def _nw_inputs(size: Size, rng: np.random.Generator) -> Arrays:
    n = size["n"]
    score = np.zeros((n + 1, n + 1), dtype=np.int32)
    score[0, :] = -NW_PENALTY * np.arange(n + 1)
    score[:, 0] = -NW_PENALTY * np.arange(n + 1)
    return {"score": score,
            "reference": rng.integers(-4, 6, (n + 1, n + 1)).astype(np.int32)}


def _nw_run(cl: Any, ctx: Any, queue: Any, data: Data) -> Result:
    n = data.size["n"]
    buf = data.buf
    diagonal = data.kernel("nw_diagonal")
    data.restore(queue, "score")
    for d in range(2, 2 * n + 1):
        first_i = max(1, d - n)
        count = min(n, d - 1) - first_i + 1
        diagonal(queue, (round_up(count, 64),), (64,), buf["score"], buf["reference"],
                 np.int32(d), np.int32(first_i), np.int32(count), np.int32(n + 1),
                 np.int32(NW_PENALTY))
    return data.read(queue, "score")


def _nw_reference(size: Size, inputs: Arrays) -> Result:
    n = size["n"]
    score = inputs["score"].copy()
    reference = inputs["reference"]
    for d in range(2, 2 * n + 1):
        i = np.arange(max(1, d - n), min(n, d - 1) + 1)
        j = d - i
        score[i, j] = np.maximum(score[i - 1, j - 1] + reference[i, j],
                                 np.maximum(score[i, j - 1], score[i - 1, j]) - NW_PENALTY)
    return (score,)


NW = Program(
    name="nw", summary="Needleman-Wunsch scores, one launch per anti-diagonal",
    source=NW_SOURCE,
    sizes={"small": {"n": 60}, "default": {"n": 2048}},
    inputs=_nw_inputs, run=_nw_run, reference=_nw_reference, tolerance=0.0)

PROGRAMS = [KMEANS, BFS, NW]
