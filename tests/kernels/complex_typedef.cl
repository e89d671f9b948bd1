// Complex arithmetic with a float2 typedef: pointwise multiply of two
// spectra and magnitude/phase extraction.

typedef float2 cfloat;

inline cfloat cmul(cfloat a, cfloat b)
{
    return (cfloat)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

inline cfloat cconj(cfloat a)
{
    return (cfloat)(a.x, -a.y);
}

__kernel void cross_spectrum(__global const cfloat *A,
                             __global const cfloat *B,
                             __global cfloat *C,
                             __global float2 *mag_phase)
{
    size_t i = get_global_id(0);
    cfloat c = cmul(A[i], cconj(B[i]));
    C[i] = c;
    mag_phase[i] = (float2)(hypot(c.x, c.y), atan2(c.y, c.x));
}
