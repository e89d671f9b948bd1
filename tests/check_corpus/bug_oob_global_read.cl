// expect: out-of-bounds 7
// launch: 64 16
// args: float*64 float*64
__kernel void shift_left(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i + 1];
}
