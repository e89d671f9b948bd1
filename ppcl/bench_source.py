"""The OpenCL C program of the benchmark suite (``ppcl bench``): every kernel in one source, so
that the suite also measures the build of a realistic multi-kernel program, and the sizes the
kernels are written for."""

from __future__ import annotations

TILE = 16  # sgemm and transpose tile edge
REDUCE_LOCAL = 256
SCAN_LOCAL = 256
SCAN_PER_ITEM = 4
SCAN_BLOCK = SCAN_LOCAL * SCAN_PER_ITEM
HIST_BINS = 256
HIST_LOCAL = 256

SOURCE = f"""
#define TILE {TILE}
#define REDUCE_LOCAL {REDUCE_LOCAL}
#define SCAN_LOCAL {SCAN_LOCAL}
#define SCAN_PER_ITEM {SCAN_PER_ITEM}
#define HIST_BINS {HIST_BINS}
""" + r"""
__kernel void empty(__global int *unused)
{
}

/* out = a * x + y */
__kernel void saxpy(const float a, __global const float *x, __global const float *y,
                    __global float *out, const int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = a * x[i] + y[i];
}

/* C (M x N) = A (M x K) * B (K x N), row-major, one work-item per element of C. */
__kernel void sgemm_naive(const int M, const int N, const int K,
                          __global const float *A, __global const float *B, __global float *C)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

/* The same product through TILE x TILE tiles of A and B staged in local memory.
   M, N and K are multiples of TILE (the host checks). */
__kernel void sgemm_tiled(const int M, const int N, const int K,
                          __global const float *A, __global const float *B, __global float *C)
{
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int col = get_group_id(0) * TILE + tx;
    int row = get_group_id(1) * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = A[row * K + t + tx];
        Bs[ty][tx] = B[(t + ty) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}

/* Tree reduction in local memory: one partial sum per work-group, summed on the host. */
__kernel void reduce_sum(__global const float *x, __global float *partial, const int n)
{
    __local float scratch[REDUCE_LOCAL];
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    scratch[lid] = gid < n ? x[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = REDUCE_LOCAL / 2; stride > 0; stride >>= 1) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}

/* Inclusive scan of one block of SCAN_LOCAL * SCAN_PER_ITEM elements: each work-item scans
   its SCAN_PER_ITEM consecutive elements, the work-group scans the per-item totals
   (Hillis-Steele in local memory), and the block total goes to block_sums. */
__kernel void scan_block(__global const int *in, __global int *out, __global int *block_sums,
                         const int n)
{
    __local int totals[SCAN_LOCAL];
    int lid = get_local_id(0);
    int base = get_global_id(0) * SCAN_PER_ITEM;
    int running[SCAN_PER_ITEM];
    int sum = 0;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        sum += idx < n ? in[idx] : 0;
        running[j] = sum;
    }
    totals[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int offset = 1; offset < SCAN_LOCAL; offset <<= 1) {
        int addend = lid >= offset ? totals[lid - offset] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        totals[lid] += addend;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int prefix = lid > 0 ? totals[lid - 1] : 0;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        if (idx < n)
            out[idx] = running[j] + prefix;
    }
    if (lid == SCAN_LOCAL - 1)
        block_sums[get_group_id(0)] = totals[lid];
}

/* Adds the scanned totals of the blocks before each block (block sums pass of the scan). */
__kernel void scan_add(__global int *out, __global const int *scanned_block_sums, const int n)
{
    int group = get_group_id(0);
    if (group == 0)
        return;
    int addend = scanned_block_sums[group - 1];
    int base = get_global_id(0) * SCAN_PER_ITEM;
    for (int j = 0; j < SCAN_PER_ITEM; ++j) {
        int idx = base + j;
        if (idx < n)
            out[idx] += addend;
    }
}

/* out (cols x rows) = transpose of in (rows x cols), through a padded local tile. */
__kernel void transpose(__global const float *in, __global float *out,
                        const int rows, const int cols)
{
    __local float tile[TILE][TILE + 1];
    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int x = get_group_id(0) * TILE + lx;
    int y = get_group_id(1) * TILE + ly;
    if (x < cols && y < rows)
        tile[ly][lx] = in[y * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int out_x = get_group_id(1) * TILE + lx;
    int out_y = get_group_id(0) * TILE + ly;
    if (out_x < rows && out_y < cols)
        out[out_y * rows + out_x] = tile[lx][ly];
}

/* 5x5 convolution, borders clamped to the nearest pixel. */
__kernel void conv2d_5x5(__global const float *in, __constant float *filter,
                         __global float *out, const int width, const int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            acc += filter[(dy + 2) * 5 + (dx + 2)] * in[yy * width + xx];
        }
    }
    out[y * width + x] = acc;
}

/* 7-point stencil on an nx x ny x nz grid; boundary points are copied. */
__kernel void stencil7(__global const float *in, __global float *out,
                       const int nx, const int ny, const int nz,
                       const float c0, const float c1)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    int plane = nx * ny;
    int idx = z * plane + y * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = c0 * in[idx]
             + c1 * (in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx]
                     + in[idx - plane] + in[idx + plane]);
}

/* One explicit Euler step of an all-pairs gravitational n-body system; w holds the mass. */
__kernel void nbody_step(__global const float4 *pos, __global const float4 *vel,
                         __global float4 *new_pos, __global float4 *new_vel,
                         const int n, const float dt, const float eps2)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pos[i];
    float4 acc = (float4)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float4 d = (float4)(q.x - p.x, q.y - p.y, q.z - p.z, 0.0f);
        float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
        float inv_r = rsqrt(r2);
        acc += (q.w * inv_r * inv_r * inv_r) * d;
    }
    float4 v = vel[i] + dt * acc;
    float4 moved = p + dt * v;
    moved.w = p.w;
    new_vel[i] = v;
    new_pos[i] = moved;
}

/* Cumulative normal distribution, Abramowitz-Stegun polynomial. */
float cnd(float d)
{
    const float a1 = 0.31938153f;
    const float a2 = -0.356563782f;
    const float a3 = 1.781477937f;
    const float a4 = -1.821255978f;
    const float a5 = 1.330274429f;
    const float rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = rsqrt2pi * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}

/* European call and put prices. */
__kernel void black_scholes(__global const float *spot, __global const float *strike,
                            __global const float *years, __global float *call,
                            __global float *put, const float rate, const float volatility,
                            const int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float s = spot[i];
    float x = strike[i];
    float t = years[i];
    float sqrt_t = sqrt(t);
    float d1 = (log(s / x) + (rate + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
    float d2 = d1 - volatility * sqrt_t;
    float discounted = x * exp(-rate * t);
    call[i] = s * cnd(d1) - discounted * cnd(d2);
    put[i] = discounted * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}

__kernel void zero_uint(__global uint *data, const int n)
{
    int i = get_global_id(0);
    if (i < n)
        data[i] = 0;
}

/* 256-bin histogram: per-work-group bins in local memory, then merged into global bins. */
__kernel void histogram256(__global const uchar *data, __global uint *bins, const int n)
{
    __local uint local_bins[HIST_BINS];
    int lid = get_local_id(0);
    for (int b = lid; b < HIST_BINS; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < HIST_BINS; b += get_local_size(0)) {
        uint count = local_bins[b];
        if (count != 0)
            atomic_add(&bins[b], count);
    }
}

/* y = A x for A in compressed sparse row form, one work-item per row. */
__kernel void spmv_csr(const int rows, __global const int *row_start,
                       __global const int *columns, __global const float *values,
                       __global const float *x, __global float *y)
{
    int row = get_global_id(0);
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = row_start[row]; k < row_start[row + 1]; ++k)
        acc += values[k] * x[columns[k]];
    y[row] = acc;
}

/* y = A x for a dense row-major rows x cols matrix, one work-item per row. */
__kernel void gemv(const int rows, const int cols, __global const float *A,
                   __global const float *x, __global float *y)
{
    int row = get_global_id(0);
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
        acc += A[row * cols + k] * x[k];
    y[row] = acc;
}
"""
