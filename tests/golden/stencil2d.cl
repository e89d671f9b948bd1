// golden: kernel=stencil local_size=8x4x1
// A guarded 5-point stencil on int indices: rows of groups, 64-bit index arithmetic.
__kernel void stencil(__global const float *in, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    int i = y * w + x;
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}
