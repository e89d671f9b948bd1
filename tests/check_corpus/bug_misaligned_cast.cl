// expect: misaligned-access 8
// launch: 8 8
// args: float*64 float*8
__kernel void shifted_vectors(__global const float *data, __global float *out)
{
    int i = get_global_id(0);
    __global const float4 *v = (__global const float4 *)(data + 1);
    float4 x = v[i];
    out[i] = x.x + x.w;
}
