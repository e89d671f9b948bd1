// Iterated 1-D smoothing in local memory: a fixed number of relaxation
// sweeps, each separated by barriers. The loop bound is a kernel argument
// so every work-item executes the same number of barriers.

__kernel void smooth_iterations(__global float *data,
                                __local float *tmp,
                                const int sweeps)
{
    int lid = get_local_id(0);
    int lsz = get_local_size(0);
    int gid = get_global_id(0);

    float v = data[gid];
    for (int s = 0; s < sweeps; s++) {
        tmp[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        float left = tmp[lid > 0 ? lid - 1 : lid];
        float right = tmp[lid < lsz - 1 ? lid + 1 : lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        v = 0.25f * left + 0.5f * v + 0.25f * right;
    }
    data[gid] = v;
}
