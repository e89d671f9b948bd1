// EXPECT: 7:17: illegal vector component name: cannot mix xyzw and sN selectors
// Named (.xyzw) and numeric (.sN) component selectors cannot be mixed.
__kernel void mix_sets(__global float4 *v)
{
    size_t i = get_global_id(0);
    float4 a = v[i];
    float2 b = a.xs1;
    v[i] = (float4)(b, b);
}
