// expect: none
// launch: 16,16 4,4
// args: float*256 float*256 int=16
__kernel void transpose_local(__global const float *in, __global float *out, int n)
{
    __local float tile[4][5];
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * 4, gy = get_group_id(1) * 4;
    tile[ly][lx] = in[(gy + ly) * n + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx + ly) * n + gy + lx] = tile[lx][ly];
}
