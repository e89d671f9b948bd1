// expect: out-of-bounds 7
// launch: 32 8
// args: float*32 float*32
__kernel void left_neighbour(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i - 1] + in[i];
}
