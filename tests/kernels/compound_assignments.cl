// Applies every compound assignment operator to integer and float data:
// += -= *= /= %= <<= >>= &= |= ^=.

__kernel void compound_ops(__global int *ia,
                           __global uint *ua,
                           __global float *fa)
{
    size_t i = get_global_id(0);
    int x = ia[i];
    uint u = ua[i];
    float f = fa[i];

    x += 7;
    x -= 3;
    x *= 5;
    x /= 2;
    x %= 1000;
    u <<= 3;
    u >>= 1;
    u &= 0xFFFFu;
    u |= 0x100u;
    u ^= 0x5A5Au;
    f += 1.5f;
    f -= 0.25f;
    f *= 2.0f;
    f /= 3.0f;

    int4 v = (int4)(x);
    v += (int4)(1, 2, 3, 4);
    v <<= (int4)(1);
    v %= (int4)(7);

    ia[i] = x + v.x + v.w;
    ua[i] = u;
    fa[i] = f;
}
