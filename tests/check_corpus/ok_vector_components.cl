// expect: none
// launch: 16 4
// args: uchar*48 float*16
// A vector declared without a value and filled in one component or one pair at a time:
// the component stores write it, they do not read the unset rest.
__kernel void pack_rgb(__global const uchar *rgb, __global float *luma)
{
    int i = get_global_id(0);
    uchar3 px;
    px.x = rgb[3 * i];
    px.y = rgb[3 * i + 1];
    px.z = rgb[3 * i + 2];
    float4 w;
    w.x = 0.25f;
    w.yz = (float2)(0.5f, 0.125f);
    w.w = 0.0f;
    float3 c = convert_float3(px);
    luma[i] = dot((float4)(c, 1.0f), w);
}
