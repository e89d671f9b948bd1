// expect: out-of-bounds 7
// launch: 16 16
// args: float4*16 float4*16
__kernel void vec_shift(__global const float4 *in, __global float4 *out)
{
    int i = get_global_id(0);
    out[i] = in[i + 1] * 2.0f;
}
