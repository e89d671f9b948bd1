// Dot product of two float arrays: each work-item handles a float4 chunk,
// then a local-memory reduction produces one partial result per group.
// The scratch buffer is passed in as a __local kernel argument.

__kernel void dot_product_reduce(__global const float *a,
                                 __global const float *b,
                                 __global float *partial,
                                 __local float *scratch,
                                 const uint n4)
{
    const uint gid = get_global_id(0);
    const uint lid = get_local_id(0);
    const uint lsz = get_local_size(0);

    float acc = 0.0f;
    if (gid < n4) {
        float4 va = vload4(gid, a);
        float4 vb = vload4(gid, b);
        acc = dot(va, vb);
    }
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint s = lsz / 2; s > 0; s /= 2) {
        if (lid < s)
            scratch[lid] = scratch[lid] + scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
