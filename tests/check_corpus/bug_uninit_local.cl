// expect: uninitialized-read 11
// launch: 32 16
// args: float*32
__kernel void half_filled(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    if (l < 8)
        t[l] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = t[15 - l];
}
