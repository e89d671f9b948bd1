// Touches every OpenCL C scalar type: bool, char, signed char, uchar,
// unsigned char, short, ushort, int, unsigned, uint, long, ulong, float,
// size_t, ptrdiff_t, intptr_t and uintptr_t, mixing them with casts.

__kernel void scalar_zoo(__global const char *c,
                         __global const uchar *uc,
                         __global const short *s,
                         __global const ushort *us,
                         __global const int *i32,
                         __global const unsigned int *u32,
                         __global const long *i64,
                         __global const ulong *u64,
                         __global float *out)
{
    size_t gid = get_global_id(0);
    ptrdiff_t delta = &out[gid] - &out[0];
    intptr_t ip = (intptr_t)delta;
    uintptr_t up = (uintptr_t)ip;

    bool positive = c[gid] > 0;
    signed char sc = (signed char)c[gid];
    unsigned char ub = uc[gid];
    unsigned u = (unsigned)u32[gid];
    short sh = s[gid];
    ushort ush = us[gid];
    long l = i64[gid] + (long)sh;
    ulong ul = u64[gid] + (ulong)ush;
    int x = i32[gid] + (positive ? 1 : 0);
    uint y = u + (uint)ub + (uint)sc;

    float r = (float)x + (float)y + (float)l + (float)ul + (float)up;
    out[gid] = r;
}
