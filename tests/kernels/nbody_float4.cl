// All-pairs n-body step. Positions are float4 (xyz + mass in w); bodies
// are staged through a local cache one tile at a time. n must be a
// multiple of the work-group size.

__kernel void nbody_step(__global const float4 *pos,
                         __global float4 *vel,
                         __global float4 *new_pos,
                         __local float4 *cache,
                         const int n,
                         const float dt,
                         const float softening)
{
    const int gid = get_global_id(0);
    const int lid = get_local_id(0);
    const int lsz = get_local_size(0);

    float4 p = pos[gid];
    float4 acc = (float4)(0.0f);

    for (int tile = 0; tile < n / lsz; tile++) {
        cache[lid] = pos[tile * lsz + lid];
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int j = 0; j < lsz; j++) {
            float4 q = cache[j];
            float4 d = (float4)(q.xyz - p.xyz, 0.0f);
            float dist2 = dot(d, d) + softening;
            float inv = rsqrt(dist2);
            float inv3 = inv * inv * inv;
            acc += d * (q.w * inv3);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    float4 v = vel[gid] + acc * dt;
    v.w = 0.0f;
    vel[gid] = v;
    new_pos[gid] = (float4)(p.xyz + v.xyz * dt, p.w);
}
