// Piecewise activation functions written with nested ternaries, and a
// two-index loop driven by the comma operator.

__kernel void activations(__global const float *in,
                          __global float *relu,
                          __global float *hard_tanh,
                          __global float *leaky)
{
    size_t i = get_global_id(0);
    float x = in[i];
    relu[i] = x > 0.0f ? x : 0.0f;
    hard_tanh[i] = x < -1.0f ? -1.0f : (x > 1.0f ? 1.0f : x);
    leaky[i] = (x >= 0.0f) ? x : 0.01f * x;
}

__kernel void reverse_segments(__global int *data, const int seg_len)
{
    int base = get_global_id(0) * seg_len;
    int lo, hi, tmp;
    for (lo = base, hi = base + seg_len - 1; lo < hi; lo++, hi--) {
        tmp = data[lo], data[lo] = data[hi], data[hi] = tmp;
    }
    int a = (lo = 0, hi = 1, lo + hi);
    data[base] += a - 1;
}
