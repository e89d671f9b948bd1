// Sparse matrix-vector product y = A * x with A in CSR format
// (row_ptr, col_idx, values); one work-item per row.

__kernel void spmv_csr(const int num_rows,
                       __global const int *row_ptr,
                       __global const int *col_idx,
                       __global const float *values,
                       __global const float *x,
                       __global float *y)
{
    int row = get_global_id(0);
    if (row < num_rows) {
        float dot = 0.0f;
        int start = row_ptr[row];
        int end = row_ptr[row + 1];
        for (int jj = start; jj < end; jj++)
            dot += values[jj] * x[col_idx[jj]];
        y[row] = dot;
    }
}
