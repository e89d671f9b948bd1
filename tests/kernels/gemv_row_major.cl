// Dense matrix-vector product y = alpha * A * x + beta * y, A row-major
// m x n. Each work-group reduces one row in local memory.

__kernel void gemv(const int m, const int n,
                   const float alpha, const float beta,
                   __global const float *A,
                   __global const float *x,
                   __global float *y,
                   __local float *part)
{
    const int row = get_group_id(0);
    const int lid = get_local_id(0);
    const int lsz = get_local_size(0);

    float sum = 0.0f;
    if (row < m) {
        __global const float *arow = A + (size_t)row * n;
        for (int j = lid; j < n; j += lsz)
            sum = mad(arow[j], x[j], sum);
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int s = lsz >> 1; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && row < m)
        y[row] = alpha * part[0] + beta * y[row];
}
