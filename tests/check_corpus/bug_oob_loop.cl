// expect: out-of-bounds 9
// launch: 16 16
// args: float*256 float*16 int=16
__kernel void row_sums(__global const float *m, __global float *sums, int n)
{
    int row = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j <= n; ++j)
        s += m[row * n + j];
    sums[row] = s;
}
