// expect: none
// launch: 64 16
// args: float*50 float*50 int=50
__kernel void guarded(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    out[i] = sqrt(fabs(in[i])) + exp(-in[i]);
}
