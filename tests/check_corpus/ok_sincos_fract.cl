// expect: none
// launch: 16 16
// args: float*16 float*16 float*16
__kernel void polar(__global float *angle, __global float *c, __global float *whole)
{
    int i = get_global_id(0);
    float cosine;
    float s = sincos(angle[i] * 6.0f, &cosine);
    float w;
    float f = fract(angle[i] * 10.0f, &w);
    c[i] = cosine + s;
    whole[i] = w + f;
}
