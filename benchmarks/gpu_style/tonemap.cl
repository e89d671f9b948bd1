/* Reinhard tone mapping of RGBA float images, pixels as float4 (array of structures), one
 * work-item per pixel in a 2-D range; a launch per frame with its own exposure. */

__kernel void tonemap(__global const float4 *hdr, __global float4 *ldr, int width,
                      int height, float exposure, float white2, float inv_gamma,
                      float saturation)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    int i = y * width + x;
    float4 px = hdr[i];
    float4 c = px * exposure;
    float lum = 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
    float mapped = lum * (1.0f + lum / white2) / (1.0f + lum);
    float scale = mapped / fmax(lum, 1e-6f);
    float4 grey = (float4)(mapped, mapped, mapped, 0.0f);
    float4 toned = grey + saturation * (c * scale - grey);
    toned = clamp(toned, 0.0f, 1.0f);
    ldr[i] = (float4)(pow(toned.x, inv_gamma), pow(toned.y, inv_gamma),
                      pow(toned.z, inv_gamma), px.w);
}
