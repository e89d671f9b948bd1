// EXPECT: 6:9: initializing int with incompatible vector type float4
// Assigning a float4 to an int is an incompatible conversion.
__kernel void narrow(__global const float4 *in, __global int *out)
{
    size_t i = get_global_id(0);
    int x = in[i];
    out[i] = x;
}
