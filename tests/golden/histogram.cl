// golden: kernel=hist local_size=16x1x1
// A grid-stride loop between barriers: run by the work-items in lock step.
__kernel void hist(__global const uchar *data, __global uint *bins, const int n)
{
    __local uint local_bins[16];
    local_bins[get_local_id(0)] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i] & 15]);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[get_local_id(0)], local_bins[get_local_id(0)]);
}
