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
