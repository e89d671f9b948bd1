// Exercises vector component selection: named (.xyzw), numeric (.s0123,
// .sA, .sF), .lo/.hi/.even/.odd, and swizzles used as lvalues.

__kernel void swizzle_ops(__global float4 *f4,
                          __global int16 *i16,
                          __global float8 *f8,
                          __global short2 *s2)
{
    size_t i = get_global_id(0);

    float4 a = f4[i];
    float4 b = a.wzyx;
    b.xy = a.zw;
    b.s3 = a.x + a.s1;
    float2 t = b.lo + b.hi;
    b.hi = t.yx;
    a.xyzw = (float4)(b.even, b.odd);
    f4[i] = a + b.s0123;

    int16 v = i16[i];
    int x = v.sA + v.sF + v.sa + v.sf;
    v.s0 = x;
    v.lo = v.hi;
    v.odd.s01 = (int2)(v.s9, v.sB);
    int8 e = v.even;
    v.hi.lo = e.hi;
    i16[i] = v;

    float8 w = f8[i];
    w.s7654 = w.lo;
    float4 q = w.odd;
    w.even = q * 2.0f;
    f8[i] = w;

    short2 s = s2[i];
    s.yx = s;
    s.lo = (short)(s.hi + 1);
    s2[i] = s;
}
