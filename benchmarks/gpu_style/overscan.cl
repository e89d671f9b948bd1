/* Overscan (bias) correction of 16-bit sensor frames: the first `dark` rows of a frame are
 * masked pixels, and a column's bias is the mean of its dark rows. Every work-item (x, y) of
 * the image region recomputes its column's bias over that window before correcting its one
 * pixel with the flat field; a launch per frame. */

__kernel void overscan(__global const ushort *raw, __global float *out,
                       __global const float *flat, int width, int height, int dark)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float bias = 0.0f;
    for (int r = 0; r < dark; r++)
        bias += raw[r * width + x];
    bias /= dark;
    out[y * width + x] = (raw[(y + dark) * width + x] - bias) * flat[y * width + x];
}
