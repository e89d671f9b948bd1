// EXPECT: 9:12: no matching overload for builtin 'clamp' with (float4, int4, int4)
// clamp(float4, int4, int4) matches no overload: vector bounds must be float4.
__kernel void clamp_vec(__global float4 *v)
{
    size_t i = get_global_id(0);
    float4 x = v[i];
    int4 lo = (int4)(0);
    int4 hi = (int4)(1);
    v[i] = clamp(x, lo, hi);
}
