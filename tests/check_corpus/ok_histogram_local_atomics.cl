// expect: none
// launch: 64 16
// args: uchar*64 uint*8=0
__kernel void histogram8(__global const uchar *data, __global uint *bins)
{
    __local uint local_bins[8];
    int l = get_local_id(0);
    if (l < 8)
        local_bins[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&local_bins[data[get_global_id(0)] % 8]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 8)
        atomic_add(&bins[l], local_bins[l]);
}
