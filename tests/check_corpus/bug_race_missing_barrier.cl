// expect: data-race 9
// launch: 64 16
// args: float*64 float*64
__kernel void neighbour_no_barrier(__global const float *in, __global float *out)
{
    __local float tile[16];
    int l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    out[get_global_id(0)] = tile[(l + 1) % 16];
}
