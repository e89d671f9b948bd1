// Math builtins that return a second result through a pointer argument:
// sincos, fract, modf and frexp, plus ldexp to rebuild the value.

__kernel void split_float(__global const float *in,
                          __global float2 *sc,
                          __global float2 *frac_parts,
                          __global float *rebuilt,
                          __global float4 *vec_frac)
{
    size_t i = get_global_id(0);
    float x = in[i];

    float c;
    float s = sincos(x, &c);
    sc[i] = (float2)(s, c);

    float fl;
    float fr = fract(x, &fl);
    float ip;
    float mf = modf(x, &ip);
    frac_parts[i] = (float2)(fr + fl, mf + ip);

    int e;
    float mant = frexp(x, &e);
    rebuilt[i] = ldexp(mant, e);

    float4 v = (float4)(x, x * 2.0f, x * 3.0f, x * 4.0f);
    float4 whole;
    float4 part = modf(v, &whole);
    vec_frac[i] = part + whole;
}
