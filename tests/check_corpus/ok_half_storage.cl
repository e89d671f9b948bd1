// expect: none
// launch: 16 8
// args: float*64 ushort*64 float*64
__kernel void half_round_trip(__global const float *in, __global half *h, __global float *out)
{
    int i = get_global_id(0);
    float4 v = vload4(i, in) * 100.0f;
    vstore_half4(v, i, h);
    vstore_half_rtz(v.x, 4 * i, h);
    out[4 * i] = vload_half(4 * i, h);
    float4 back = vload_half4(i, h);
    out[4 * i + 1] = back.y;
    out[4 * i + 2] = back.z;
    out[4 * i + 3] = back.w;
}
