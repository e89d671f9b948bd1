// expect: none
// launch: 32 8
// args: float*32 float*32
__kernel void moving_window(__global const float *in, __global float *out)
{
    float w[5];
    int i = get_global_id(0);
    int n = get_global_size(0);
    for (int k = 0; k < 5; ++k)
        w[k] = in[clamp(i + k - 2, 0, n - 1)];
    float s = 0.0f;
    for (int k = 0; k < 5; ++k)
        s += w[k];
    out[i] = s / 5.0f;
}
