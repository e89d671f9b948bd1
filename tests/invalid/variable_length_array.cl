// EXPECT: 5:18: variable length arrays are not supported
// Array sizes must be compile-time constants; n is a runtime value.
__kernel void window_sum(__global const float *in, __global float *out, const int n)
{
    float window[n];
    size_t i = get_global_id(0);
    for (int k = 0; k < n; k++)
        window[k] = in[i + k];
    out[i] = window[0];
}
