// EXPECT: 7:27: vector component access exceeds type float2
// A float2 has only x and y components; .z is out of range.
__kernel void length2(__global const float2 *in, __global float *out)
{
    size_t i = get_global_id(0);
    float2 v = in[i];
    out[i] = v.x + v.y + v.z;
}
