// EXPECT: 7:10: vector is not assignable (contains duplicate components)
// A swizzle with repeated components cannot be assigned to.
__kernel void splat(__global float4 *v, const float s)
{
    size_t i = get_global_id(0);
    float4 a = v[i];
    a.xx = (float2)(s, s);
    v[i] = a;
}
