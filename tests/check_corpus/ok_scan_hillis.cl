// expect: none
// launch: 32 16
// args: int*32
__kernel void scan_hillis(__global int *data)
{
    __local int a[16];
    __local int b[16];
    int l = get_local_id(0);
    a[l] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int *src = a;
    __local int *dst = b;
    for (int d = 1; d < 16; d *= 2) {
        dst[l] = l >= d ? src[l] + src[l - d] : src[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        __local int *t = src;
        src = dst;
        dst = t;
    }
    data[get_global_id(0)] = src[l];
}
