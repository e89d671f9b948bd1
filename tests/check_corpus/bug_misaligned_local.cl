// expect: misaligned-access 11
// launch: 16 16
// args: uchar*80 int*16
__kernel void unpack_records(__global const uchar *bytes, __global int *out)
{
    __local uchar rec[80];
    int l = get_local_id(0);
    for (int k = 0; k < 5; ++k)
        rec[5 * l + k] = bytes[5 * l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = *(__local int *)(rec + 5 * l + 1);
}
