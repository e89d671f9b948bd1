// 5x5 convolution of a single-channel float image with clamp-to-edge
// border handling. The filter taps live in program-scope constant memory.

__constant float gauss5x5[25] = {
    1.0f / 273,  4.0f / 273,  7.0f / 273,  4.0f / 273, 1.0f / 273,
    4.0f / 273, 16.0f / 273, 26.0f / 273, 16.0f / 273, 4.0f / 273,
    7.0f / 273, 26.0f / 273, 41.0f / 273, 26.0f / 273, 7.0f / 273,
    4.0f / 273, 16.0f / 273, 26.0f / 273, 16.0f / 273, 4.0f / 273,
    1.0f / 273,  4.0f / 273,  7.0f / 273,  4.0f / 273, 1.0f / 273
};

__kernel void convolve5x5(__global const float *src,
                          __global float *dst,
                          const int width,
                          const int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    float sum = 0.0f;
    for (int dy = -2; dy <= 2; dy++) {
        int yy = clamp(y + dy, 0, height - 1);
        for (int dx = -2; dx <= 2; dx++) {
            int xx = clamp(x + dx, 0, width - 1);
            sum += src[yy * width + xx] * gauss5x5[(dy + 2) * 5 + (dx + 2)];
        }
    }
    dst[y * width + x] = sum;
}
