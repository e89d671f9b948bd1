// Fast float manipulation through a union: extracts the IEEE-754
// exponent field and computes the classic bit-hack inverse square root
// estimate refined with one Newton step.

typedef union {
    float f;
    uint u;
    int i;
    uchar bytes[4];
} FloatBits;

__kernel void float_bits(__global const float *in,
                         __global int *exponent,
                         __global float *inv_sqrt,
                         __global uchar *low_byte)
{
    size_t gid = get_global_id(0);
    FloatBits fb;
    fb.f = in[gid];
    exponent[gid] = (int)((fb.u >> 23) & 0xFFu) - 127;
    low_byte[gid] = fb.bytes[0];

    float x = fb.f;
    FloatBits est;
    est.f = x;
    est.i = 0x5f3759df - (est.i >> 1);
    float y = est.f;
    y = y * (1.5f - 0.5f * x * y * y);
    inv_sqrt[gid] = y;
}
