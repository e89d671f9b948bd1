// EXPECT: 4:9: 'half' names a type in OpenCL C (clang: "cannot combine with previous 'int'")
__kernel void split_halves(__global const int *in, __global int *out)
{
    int half = in[0] / 2;
    out[0] = half;
    out[1] = in[0] - half;
}
