// expect: out-of-bounds 7
// launch: 64 16
// args: float*60 float*60 int=60
__kernel void scale(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    out[i] = 2.0f * in[i];
}
