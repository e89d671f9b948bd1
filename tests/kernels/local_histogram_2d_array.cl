// Per-group 16-bin histograms of four channels using a 2-D __local array
// and local atomics, written out as one row of counts per group.

#define CHANNELS 4
#define NBINS 16

__kernel void channel_histograms(__global const uchar4 *pixels,
                                 __global uint *group_hist)
{
    __local uint hist[CHANNELS][NBINS];
    uint lid = get_local_id(0);
    uint lsz = get_local_size(0);

    for (uint k = lid; k < CHANNELS * NBINS; k += lsz)
        hist[k / NBINS][k % NBINS] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    uchar4 p = pixels[get_global_id(0)];
    uchar4 bins = p >> (uchar4)(4);
    atomic_inc(&hist[0][bins.x]);
    atomic_inc(&hist[1][bins.y]);
    atomic_inc(&hist[2][bins.z]);
    atomic_inc(&hist[3][bins.w]);
    barrier(CLK_LOCAL_MEM_FENCE);

    __global uint *dst = group_hist + get_group_id(0) * CHANNELS * NBINS;
    for (uint k = lid; k < CHANNELS * NBINS; k += lsz)
        dst[k] = hist[k / NBINS][k % NBINS];
}
