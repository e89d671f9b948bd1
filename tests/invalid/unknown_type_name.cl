// EXPECT: 6:5: unknown type name 'vec4'
// vec4 is not an OpenCL C type (float4 is).
__kernel void norms(__global const float4 *in, __global float *out)
{
    size_t i = get_global_id(0);
    vec4 v = in[i];
    out[i] = length(v);
}
