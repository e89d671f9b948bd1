// expect: out-of-bounds 9
// launch: 8,8 4,4
// args: float*64 float*64 int=8
__kernel void transpose_wrong(__global const float *in, __global float *out, int n)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    out[x * n + y] = in[y * n + x];
    out[(x + 1) * n + y] += 0.0f;
}
