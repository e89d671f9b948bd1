// Tree reduction (sum) of a float array within each work-group using a
// statically sized __local array; one partial sum per group is written.

#define WG_SIZE 128

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
void reduce_local_tree(__global const float *in,
                       __global float *partial,
                       const uint n)
{
    __local float scratch[WG_SIZE];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);

    scratch[lid] = (gid < n) ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint stride = get_local_size(0) >> 1; stride > 0; stride >>= 1) {
        if (lid < stride) {
            scratch[lid] += scratch[lid + stride];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (lid == 0) {
        partial[get_group_id(0)] = scratch[0];
    }
}
