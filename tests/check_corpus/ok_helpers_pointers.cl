// expect: none
// launch: 16 4
// args: float*64 float*16
float sum4(__global const float *p)
{
    float s = 0.0f;
    for (int k = 0; k < 4; ++k)
        s += *(p + k);
    return s;
}

__kernel void row_sum4(__global const float *m, __global float *out)
{
    int i = get_global_id(0);
    out[i] = sum4(m + 4 * i);
}
