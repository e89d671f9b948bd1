// expect: out-of-bounds 7
// launch: 64 16
// args: float*64 local=32
__kernel void stage(__global float *data, __local float *scratch)
{
    int l = get_local_id(0);
    scratch[l] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = scratch[15 - l];
}
