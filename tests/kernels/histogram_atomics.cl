// 256-bin histogram of byte data. Each work-group accumulates a private
// histogram in local memory with local atomics, then merges it into the
// global histogram with global atomics.

#define BINS 256

__kernel void histogram256(__global const uchar *data,
                           const uint n,
                           __global uint *hist)
{
    __local uint local_hist[BINS];
    uint lid = get_local_id(0);
    uint lsz = get_local_size(0);

    for (uint b = lid; b < BINS; b += lsz)
        local_hist[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        atomic_inc(&local_hist[data[i]]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint b = lid; b < BINS; b += lsz) {
        uint count = local_hist[b];
        if (count != 0u)
            atomic_add(&hist[b], count);
    }
}
