// Mandelbrot set escape-time fractal, colouring each pixel into a uchar4
// RGBA buffer. Uses a while loop with a work-item-dependent trip count.

__kernel void mandelbrot(__global uchar4 *out,
                         const float x0, const float y0,
                         const float scale,
                         const int max_iter)
{
    int px = get_global_id(0);
    int py = get_global_id(1);
    int width = get_global_size(0);

    float cr = x0 + px * scale;
    float ci = y0 + py * scale;
    float zr = 0.0f, zi = 0.0f;
    int iter = 0;

    while (zr * zr + zi * zi <= 4.0f && iter < max_iter) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        iter++;
    }

    uchar shade = (uchar)(255 * iter / max_iter);
    out[py * width + px] = (uchar4)(shade, (uchar)(shade >> 1), (uchar)(255 - shade), 255);
}
