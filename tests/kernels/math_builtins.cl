// Evaluates a selection of math builtins (standard, native_ and half_
// variants) on each input element and stores each result separately.

__kernel void math_eval(__global const float *x,
                        __global const float *y,
                        __global float *out,
                        const uint stride)
{
    size_t i = get_global_id(0);
    float a = x[i];
    float b = y[i];
    float pa = fabs(a) + 1.0f;

    out[i + 0 * stride] = sin(a) + cos(b);
    out[i + 1 * stride] = exp(a) - log(pa);
    out[i + 2 * stride] = pow(pa, b);
    out[i + 3 * stride] = sqrt(pa) * rsqrt(pa);
    out[i + 4 * stride] = fma(a, b, 1.0f) + mad(a, b, -1.0f);
    out[i + 5 * stride] = fmin(a, b) + fmax(a, b);
    out[i + 6 * stride] = floor(a) + ceil(b);
    out[i + 7 * stride] = native_sin(a) + native_exp(b);
    out[i + 8 * stride] = native_divide(a, pa);
    out[i + 9 * stride] = half_sqrt(pa);
    out[i + 10 * stride] = hypot(a, b);
    out[i + 11 * stride] = atan2(b, a);
}

__kernel void math_eval_vec(__global float4 *v)
{
    size_t i = get_global_id(0);
    float4 a = v[i];
    v[i] = fmax(sqrt(fabs(a)), exp(-a)) + pow(fabs(a), (float4)(0.5f));
}
