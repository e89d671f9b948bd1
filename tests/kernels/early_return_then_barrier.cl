// Per-group block sum where whole work-groups beyond the active range exit
// early. The early return depends only on the group id, so it is uniform
// within a work-group and the later barrier is still reached by all
// work-items of every group that continues.

__kernel void block_sum_active(__global const int *in,
                               __global int *out,
                               const uint active_groups,
                               __local int *scratch)
{
    if (get_group_id(0) >= active_groups)
        return;

    uint lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid == 0) {
        int s = 0;
        for (uint i = 0; i < get_local_size(0); i++)
            s += scratch[i];
        out[get_group_id(0)] = s;
    }
}
