// expect: uninitialized-read 11
// launch: 16 16
// args: float*16
__kernel void partial_private(__global float *out)
{
    float v[4];
    int i = get_global_id(0);
    v[0] = 1.0f;
    v[1] = 2.0f;
    v[2] = 3.0f;
    out[i] = v[0] + v[1] + v[2] + v[3];
}
