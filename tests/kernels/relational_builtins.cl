// Sanitises float4 data with the relational builtins: NaN/Inf checks,
// sign tests, select/bitselect blending and any/all reductions.

__kernel void sanitize(__global float4 *data,
                       __global int *flags,
                       const float replacement)
{
    size_t i = get_global_id(0);
    float4 v = data[i];

    int4 bad = isnan(v) | isinf(v);
    int4 good = isfinite(v);
    int4 neg = signbit(v);
    int4 eq = isequal(v, (float4)(0.0f));
    int4 gt = isgreater(v, (float4)(1.0f));

    float4 cleaned = select(v, (float4)(replacement), bad);
    float4 mask = as_float4(gt);
    cleaned = bitselect(cleaned, (float4)(1.0f), mask);
    data[i] = cleaned;

    int f = 0;
    f |= any(bad) ? 1 : 0;
    f |= all(good) ? 2 : 0;
    f |= any(neg) ? 4 : 0;
    f |= all(eq) ? 8 : 0;
    f |= isnan(v.x) ? 16 : 0;
    f |= select(0, 32, (int)signbit(v.y));
    flags[i] = f;
}
