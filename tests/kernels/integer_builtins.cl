// Exercises the integer builtin functions on scalar and vector operands.

__kernel void integer_ops(__global const int *a,
                          __global const int *b,
                          __global int *iout,
                          __global uint *uout,
                          __global long *lout,
                          __global const uchar4 *bytes,
                          __global uchar4 *bout)
{
    size_t i = get_global_id(0);
    int x = a[i];
    int y = b[i];
    uint ux = (uint)x;
    uint uy = (uint)y;

    iout[8 * i + 0] = abs(x) > 0 ? (int)abs(x) : 0;
    uout[8 * i + 0] = abs_diff(x, y);
    iout[8 * i + 1] = add_sat(x, y) - sub_sat(x, y);
    iout[8 * i + 2] = hadd(x, y) + rhadd(x, y);
    uout[8 * i + 1] = clz(ux) + popcount(uy);
    iout[8 * i + 3] = mul_hi(x, y) + mad_hi(x, y, 1);
    iout[8 * i + 4] = mad_sat(x, y, 3);
    iout[8 * i + 5] = mad24(x & 0xFFFF, y & 0xFFFF, 7) + mul24(x & 0xFF, y & 0xFF);
    uout[8 * i + 2] = rotate(ux, 5u);
    iout[8 * i + 6] = min(x, y) * max(x, y);
    iout[8 * i + 7] = clamp(x, -10, 10);
    lout[i] = upsample(x, uy);

    uchar4 p = bytes[i];
    uchar4 q = add_sat(p, (uchar4)(200));
    q = sub_sat(q, (uchar4)(10));
    q = max(q, rhadd(p, q));
    ushort hi_lo = upsample((uchar)p.x, (uchar)p.y);
    uout[8 * i + 3] = hi_lo;
    bout[i] = clamp(q, (uchar4)(16), (uchar4)(235));
}
