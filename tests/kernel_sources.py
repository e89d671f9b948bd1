"""OpenCL C kernels shared by several test modules."""

REDUCE = """
__kernel void reduce(__global const float *in, __global float *out, __local float *s) {
    uint lid = get_local_id(0);
    s[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = s[0];
}
"""

# a uchar4 element loaded whole and used a component at a time (component loads)
LUMINANCE = """
__kernel void luminance(__global const uchar4 *px, __global float *out, float k)
{
    int i = get_global_id(0);
    float4 c = convert_float4(px[i]);
    out[i] = (c.x + c.y + c.z) * k - c.w;
}
"""

# a vendor sample's Sobel filter over uchar4 pixels, its ids and sizes kept in TYPE (uint there)
SOBEL = """
__kernel void sobel(__global uchar4 *in, __global uchar4 *out)
{
    TYPE x = get_global_id(0), y = get_global_id(1);
    TYPE w = get_global_size(0), h = get_global_size(1);
    int c = x + y * w;
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) {
        float4 i00 = convert_float4(in[c - 1 - w]), i20 = convert_float4(in[c + 1 - w]);
        float4 i01 = convert_float4(in[c - 1]), i21 = convert_float4(in[c + 1]);
        float4 i02 = convert_float4(in[c - 1 + w]), i22 = convert_float4(in[c + 1 + w]);
        float4 gx = i00 + (float4)(2) * i01 + i02 - i20 - (float4)(2) * i21 - i22;
        float4 gy = i00 - i02 + fmin(i20 - i22, 300.0f);
        out[c] = convert_uchar4_sat(hypot(gx, gy) / (float4)(2));
    }
}
"""
