// EXPECT: 7:9: assigning __global pointer to __local pointer changes address space
// A __global pointer cannot be assigned to a __local pointer.
__kernel void stage(__global float *src, __local float *tile)
{
    size_t lid = get_local_id(0);
    __local float *dst = tile;
    dst = src;
    dst[lid] = 1.0f;
}
