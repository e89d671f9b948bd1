// Exercises the common functions: clamp, mix, step, smoothstep, sign,
// degrees and radians, on floats and float4 vectors.

__kernel void common_ops(__global const float4 *a,
                         __global const float4 *b,
                         __global float4 *out,
                         const float t)
{
    size_t i = get_global_id(0);
    float4 x = a[i];
    float4 y = b[i];

    float4 blended = mix(x, y, t);
    float4 edges = step(0.5f, x) + step(y, x);
    float4 soft = smoothstep(0.0f, 1.0f, x);
    float4 sgn = sign(y);
    float4 clamped = clamp(x, -1.0f, 1.0f);
    float ang = radians(degrees(x.s0));

    out[i] = blended + edges + soft + sgn + clamped + (float4)(ang);
}
