// expect: barrier-divergence 10
// launch: 32 16
// args: float*32
__kernel void barrier_in_branch(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    t[l] = data[get_global_id(0)];
    if (l < 8)
        barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = t[l];
}
