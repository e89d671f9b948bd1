// Producer/consumer staging that uses global and local barriers plus the
// explicit mem_fence, read_mem_fence and write_mem_fence builtins.

__kernel void fenced_exchange(__global float *gbuf,
                              __global float *result,
                              __local float *lbuf)
{
    size_t gid = get_global_id(0);
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    size_t base = get_group_id(0) * lsz;

    gbuf[gid] = (float)gid * 0.5f;
    write_mem_fence(CLK_GLOBAL_MEM_FENCE);
    lbuf[lid] = (float)lid;
    mem_fence(CLK_LOCAL_MEM_FENCE);

    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

    read_mem_fence(CLK_GLOBAL_MEM_FENCE);
    float neighbour = gbuf[base + (lid + 1) % lsz];
    float mine = lbuf[lsz - 1 - lid];
    barrier(CLK_GLOBAL_MEM_FENCE);

    result[gid] = neighbour + mine;
}
