// expect: none
// launch: 16 16
// args: float*16 int*16 uint*16
__kernel void conversions(__global const float *f, __global int *i, __global uint *bits)
{
    int g = get_global_id(0);
    float x = f[g] * 300.0f - 150.0f;
    i[g] = convert_int_sat(x) + convert_int_rte(x) + (int)x;
    bits[g] = as_uint(f[g]) >> 3;
}
