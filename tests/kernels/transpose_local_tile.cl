// Matrix transpose through a padded local tile so that both the global
// read and the global write are coalesced. out is cols x rows.

#define TDIM 16

__kernel void transpose_tile(__global const float *in,
                             __global float *out,
                             const uint rows,
                             const uint cols)
{
    __local float tile[TDIM][TDIM + 1];

    uint gx = get_group_id(0) * TDIM + get_local_id(0);
    uint gy = get_group_id(1) * TDIM + get_local_id(1);
    if (gx < cols && gy < rows)
        tile[get_local_id(1)][get_local_id(0)] = in[gy * cols + gx];

    barrier(CLK_LOCAL_MEM_FENCE);

    uint tx = get_group_id(1) * TDIM + get_local_id(0);
    uint ty = get_group_id(0) * TDIM + get_local_id(1);
    if (tx < rows && ty < cols)
        out[ty * rows + tx] = tile[get_local_id(0)][get_local_id(1)];
}
