// 3x3 box blur on an RGBA image stored as uchar4. Pixels are widened to
// float4 for accumulation and narrowed back with saturation.

__kernel void box_blur_rgba(__global const uchar4 *src,
                            __global uchar4 *dst,
                            const int width,
                            const int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    float4 acc = (float4)(0.0f);
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int xx = clamp(x + dx, 0, width - 1);
            int yy = clamp(y + dy, 0, height - 1);
            acc += convert_float4(src[yy * width + xx]);
        }
    }
    acc *= (1.0f / 9.0f);
    dst[y * width + x] = convert_uchar4_sat_rte(acc);
}
