// expect: out-of-bounds 6
// launch: 32 8
// args: float*32 float*32
float at(__global const float *p, int i)
{
    return p[i];
}

__kernel void via_helper(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    out[i] = at(in, i) + at(in, i + 2);
}
