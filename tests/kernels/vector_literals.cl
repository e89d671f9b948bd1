// Vector literal construction from scalars, sub-vectors and a single
// replicated scalar, across several element types and widths.

__kernel void build_vectors(__global const float *in,
                            __global float4 *out4,
                            __global int4 *outi,
                            __global float8 *out8,
                            __global uchar16 *outb)
{
    size_t i = get_global_id(0);
    float a = in[i];
    float2 b = (float2)(a, a + 1.0f);
    float c = a * 2.0f;

    out4[i] = (float4)(a, b.xy, c);
    outi[i] = (int4)(1) + (int4)(0, 1, 2, 3);

    float3 d = (float3)(b, c);
    float4 e = (float4)(d, 1.0f);
    out8[i] = (float8)(e, (float4)(b, b));

    uchar8 lo = (uchar8)((uchar)1, (uchar)2, (uchar)3, (uchar)4,
                         (uchar)5, (uchar)6, (uchar)7, (uchar)8);
    outb[i] = (uchar16)(lo, (uchar8)((uchar)255));
}
