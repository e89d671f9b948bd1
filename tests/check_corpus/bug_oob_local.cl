// expect: out-of-bounds 10
// launch: 64 16
// args: float*64 float*64
__kernel void local_neighbour(__global const float *in, __global float *out)
{
    __local float tile[16];
    int l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[l + 1];
}
