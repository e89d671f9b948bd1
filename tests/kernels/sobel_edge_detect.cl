// Sobel edge magnitude on a grayscale float image; border pixels are
// written as zero. Gradient kernels are stored as 2-D constant arrays.

__constant int sobel_x[3][3] = { { -1, 0, 1 }, { -2, 0, 2 }, { -1, 0, 1 } };
__constant int sobel_y[3][3] = { { -1, -2, -1 }, { 0, 0, 0 }, { 1, 2, 1 } };

__kernel void sobel(__global const float *img,
                    __global float *edges,
                    const int w,
                    const int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        edges[y * w + x] = 0.0f;
        return;
    }

    float gx = 0.0f, gy = 0.0f;
    for (int j = -1; j <= 1; j++) {
        for (int i = -1; i <= 1; i++) {
            float p = img[(y + j) * w + (x + i)];
            gx += sobel_x[j + 1][i + 1] * p;
            gy += sobel_y[j + 1][i + 1] * p;
        }
    }
    edges[y * w + x] = sqrt(gx * gx + gy * gy);
}
