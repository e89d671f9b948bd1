// EXPECT: 3:28: pointer kernel argument must be in __global, __constant or __local address space
// Pointer kernel arguments must be __global, __constant or __local.
__kernel void scale(float *p, const float s)
{
    size_t i = get_global_id(0);
    p[i] *= s;
}
