// expect: none
// launch: 8 8
// args: float*64 float*8 float*8 int=8
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     int cols)
{
    int r = get_global_id(0);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s = mad(A[r * cols + c], x[c], s);
    y[r] = s;
}
