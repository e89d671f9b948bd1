// Convert packed 8-bit RGB pixels (3 bytes each) to 8-bit luminance using
// the Rec. 601 weights.

__constant float3 luma_weights = (float3)(0.299f, 0.587f, 0.114f);

__kernel void rgb_to_gray(__global const uchar *rgb,
                          __global uchar *gray,
                          const uint npixels)
{
    uint i = get_global_id(0);
    if (i >= npixels)
        return;
    uchar3 px = vload3(i, rgb);
    float y = dot(convert_float3(px), luma_weights);
    gray[i] = convert_uchar_sat(y + 0.5f);
}
