/* Per-column calibration of sensor frames: the gain and offset of column x are polynomials
 * (degree coefficients each) of the column's temperature reading. Every work-item (x, y) evaluates both
 * polynomials for its column before correcting its one pixel, as a GPU kernel with one
 * work-item per output element does; a launch per frame. */

__kernel void calibrate(__global const float *raw, __global float *out,
                        __global const float *temperature, __constant float *gain_coef,
                        __constant float *offset_coef, int width, int height, int degree)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float t = temperature[x];
    float gain = 0.0f, offset = 0.0f;
    for (int k = degree - 1; k >= 0; k--) {
        gain = gain * t + gain_coef[k];
        offset = offset * t + offset_coef[k];
    }
    out[y * width + x] = raw[y * width + x] * gain + offset;
}
