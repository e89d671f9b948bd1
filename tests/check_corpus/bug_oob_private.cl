// expect: out-of-bounds 10
// launch: 16 16
// args: float*16
__kernel void private_window(__global float *out)
{
    float window[4];
    int i = get_global_id(0);
    for (int k = 0; k < 4; ++k)
        window[k] = (float)(i + k);
    out[i] = window[i % 8];
}
