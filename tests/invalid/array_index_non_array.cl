// EXPECT: 7:15: subscripted value is not an array, pointer, or vector
// Subscripting a scalar float is invalid.
__kernel void pick(__global const float *in, __global float *out)
{
    size_t i = get_global_id(0);
    float v = in[i];
    out[i] = v[0];
}
