// Stages a block of global data into local memory with
// async_work_group_copy, processes it, and copies the result back.

__kernel void async_scale(__global const float4 *in,
                          __global float4 *out,
                          __local float4 *tile,
                          const float factor)
{
    size_t lsz = get_local_size(0);
    size_t base = get_group_id(0) * lsz;
    size_t lid = get_local_id(0);

    event_t ev = async_work_group_copy(tile, in + base, lsz, 0);
    wait_group_events(1, &ev);

    float4 v = tile[lid] * factor + tile[(lid + 1) % lsz];
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);

    event_t back = async_work_group_copy(out + base, tile, lsz, 0);
    wait_group_events(1, &back);
}
