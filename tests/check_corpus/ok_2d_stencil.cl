// expect: none
// launch: 8,8 4,4
// args: float*64 float*64
__kernel void blur(__global const float *in, __global float *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_global_size(0), h = get_global_size(1);
    float s = 0.0f;
    int count = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h)
                continue;
            s += in[yy * w + xx];
            count++;
        }
    out[y * w + x] = s / count;
}
