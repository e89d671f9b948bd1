// Naive dense matrix multiply C = A * B (row-major), one work-item per
// output element using a 2-D NDRange.

__kernel void matmul_naive(__global const float *A,
                           __global const float *B,
                           __global float *C,
                           const int M, const int N, const int K)
{
    const int col = get_global_id(0);
    const int row = get_global_id(1);
    if (row >= M || col >= N)
        return;

    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
        sum += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = sum;
}
