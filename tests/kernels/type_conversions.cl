// Explicit conversions with saturation and rounding modes:
// convert_int4, convert_uchar_sat, convert_int_rte, convert_float4_rtz,
// convert_char4_sat_rtn, plus ordinary C casts.

__kernel void conversions(__global const float4 *f,
                          __global int4 *i4,
                          __global uchar *u8,
                          __global int *ri,
                          __global float4 *fz,
                          __global char4 *c4,
                          __global const int4 *src_int)
{
    size_t i = get_global_id(0);
    float4 v = f[i];

    i4[i] = convert_int4(v);
    u8[i] = convert_uchar_sat(v.x * 255.0f);
    ri[i] = convert_int_rte(v.y) + (int)v.z;
    fz[i] = convert_float4_rtz(src_int[i]);
    c4[i] = convert_char4_sat_rtn(v * 100.0f);

    short s = (short)ri[i];
    ushort us = convert_ushort_sat(s);
    ri[i] += (int)us;
}
