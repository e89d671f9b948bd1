// Helper functions that receive __global and __local pointers: a local
// tree-reduction helper, a global load helper and a store helper, used
// to compute per-group maxima.

float load_or(__global const float *p, uint idx, uint n, float fallback)
{
    return idx < n ? p[idx] : fallback;
}

void local_max_reduce(__local float *buf, uint lid, uint size)
{
    for (uint s = size / 2; s > 0; s >>= 1) {
        if (lid < s)
            buf[lid] = fmax(buf[lid], buf[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

void store_result(__global float *dst, uint slot, __local const float *buf)
{
    dst[slot] = buf[0];
}

__kernel void group_max(__global const float *in,
                        __global float *out,
                        __local float *buf,
                        const uint n)
{
    uint lid = get_local_id(0);
    buf[lid] = load_or(in, get_global_id(0), n, -INFINITY);
    barrier(CLK_LOCAL_MEM_FENCE);
    local_max_reduce(buf, lid, get_local_size(0));
    if (lid == 0)
        store_result(out, get_group_id(0), buf);
}
