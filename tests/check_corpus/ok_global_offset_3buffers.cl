// expect: none
// launch: 32 8
// args: float*32 float*32 float*32
__kernel void add3(__global const float *a, __global const float *b, __global float *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] * 0.5f;
    if (i == 0)
        c[i] += (float)get_num_groups(0);
}
