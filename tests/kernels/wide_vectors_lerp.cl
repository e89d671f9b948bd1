// Linear interpolation and thresholding on wide vectors (float8, int8,
// uchar16, short16) with explicit conversions between element types.

__kernel void wide_lerp(__global const float8 *a,
                        __global const float8 *b,
                        __global float8 *out,
                        __global int8 *mask_out,
                        const float t)
{
    size_t i = get_global_id(0);
    float8 x = a[i];
    float8 y = b[i];
    float8 r = x + (y - x) * t;
    out[i] = r;
    int8 gt = r > (float8)(0.5f);
    mask_out[i] = gt & (int8)(1);
}

__kernel void threshold_bytes(__global const uchar16 *px,
                              __global uchar16 *bin,
                              __global short16 *diff,
                              const uchar level)
{
    size_t i = get_global_id(0);
    uchar16 p = px[i];
    char16 above = as_char16(p > (uchar16)(level));
    bin[i] = as_uchar16(above) & (uchar16)(255);
    diff[i] = convert_short16(p) - (short16)((short)level);
}
