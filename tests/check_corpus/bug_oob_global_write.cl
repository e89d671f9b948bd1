// expect: out-of-bounds 8
// launch: 64 16
// args: float*64 float*64 int=64
__kernel void copy_guard_off_by_one(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i <= n)
        out[i + 1] = in[i];
}
