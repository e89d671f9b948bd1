// EXPECT: 7:12: implicit conversion from int4 to float4 is not allowed
// Vector types never convert implicitly: int4 to float4 needs convert_float4.
__kernel void to_float(__global const int4 *in, __global float4 *out)
{
    size_t i = get_global_id(0);
    int4 iv = in[i];
    float4 fv = iv;
    out[i] = fv * 0.5f;
}
