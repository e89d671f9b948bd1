/* y = A x + b with A (m x n) stored column-major, A[j * m + i]: one work-item per row, so
 * that consecutive work-items read consecutive words of each column (cuBLAS's layout).
 * The host iterates the affine map x <- A x + b, ping-ponging two vectors. */

__kernel void gemv_colmajor(__global const float *A, __global const float *x,
                            __global const float *b, __global float *y, int m, int n)
{
    int i = get_global_id(0);
    if (i >= m)
        return;
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        sum += A[j * m + i] * x[j];
    y[i] = sum + b[i];
}
