// Min/max reduction over uints in local memory accessed through a
// volatile pointer, with barriers between every step.

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void minmax_volatile(__global const uint *in,
                     __global uint2 *out)
{
    __local uint lmin[64];
    __local uint lmax[64];
    volatile __local uint *vmin = lmin;
    volatile __local uint *vmax = lmax;
    uint lid = get_local_id(0);

    uint v = in[get_global_id(0)];
    vmin[lid] = v;
    vmax[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint s = 32; s > 0; s >>= 1) {
        if (lid < s) {
            vmin[lid] = min(vmin[lid], vmin[lid + s]);
            vmax[lid] = max(vmax[lid], vmax[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = (uint2)(vmin[0], vmax[0]);
}
