// Converts between 32-bit floats and 16-bit half storage. half values are
// only touched through pointers with the vload_half / vstore_half family.

__kernel void float_to_half(__global const float *in,
                            __global half *out,
                            __global half *out_rtz)
{
    size_t i = get_global_id(0);
    float v = in[i];
    vstore_half(v, i, out);
    vstore_half_rtz(v, i, out_rtz);
}

__kernel void half_to_float(__global const half *in,
                            __global float *out)
{
    size_t i = get_global_id(0);
    out[i] = vload_half(i, in) * 2.0f;
}

__kernel void half4_scale(__global const half *in,
                          __global half *out,
                          const float s)
{
    size_t i = get_global_id(0);
    float4 v = vload_half4(i, in);
    vstore_half4(v * s, i, out);
}
