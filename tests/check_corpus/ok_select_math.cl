// expect: none
// launch: 16 16
// args: float4*16
__kernel void select_math(__global float4 *v)
{
    int i = get_global_id(0);
    float4 x = v[i];
    int4 big = x > (float4)(0.5f);
    float4 y = select(x, 1.0f - x, big);
    y = fmax(y, 0.1f) + mix(x, y, 0.25f) + clamp(x, 0.2f, 0.8f);
    v[i] = y + (float4)(sin(x.x), cos(x.y), pow(x.z, 2.0f), log(x.w + 1.0f));
}
