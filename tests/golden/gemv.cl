// golden: kernel=gemv local_size=16x1x1
// One work-item per row summing along it: the work-items are jammed by four.
__kernel void gemv(__global const float *A, __global const float *x, __global float *y,
                   const int rows, const int cols)
{
    int row = get_global_id(0);
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
        acc += A[row * cols + k] * x[k];
    y[row] = acc;
}
