/* Sparse matrix-vector product in ELL format with the coalesced layout: entry j of row r at
 * vals[j * nrows + r] and cols[j * nrows + r], rows padded with zeros. One work-item per row;
 * the host iterates x <- b + A x, ping-ponging two vectors. */

__kernel void spmv_ell(__global const float *vals, __global const int *cols,
                       __global const float *x, __global const float *b, __global float *y,
                       int nrows, int width)
{
    int row = get_global_id(0);
    if (row >= nrows)
        return;
    float sum = 0.0f;
    for (int j = 0; j < width; j++) {
        float v = vals[j * nrows + row];
        sum += v * x[cols[j * nrows + row]];
    }
    y[row] = b[row] + sum;
}
