// expect: none
// launch: 16 4
// args: float4*16 float4*16 float*16
__kernel void vec_ops(__global const float4 *a, __global float4 *b, __global float *d)
{
    int i = get_global_id(0);
    float4 v = a[i];
    float4 w = v.wzyx * 2.0f + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    w.xy = v.zw;
    b[i] = w;
    d[i] = dot(v, w) + length(v.xyz) + v.s3;
}
