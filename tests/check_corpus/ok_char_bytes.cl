// expect: none
// launch: 64 16
// args: uchar*64 uchar*64
__kernel void invert_bytes(__global const uchar *in, __global uchar *out)
{
    int i = get_global_id(0);
    uchar c = in[i];
    out[i] = (uchar)(255 - c) + (uchar)(c >> 1);
}
