// EXPECT: 8:19: cannot assign to __constant (read-only) data
// Program-scope __constant data is read-only.
__constant float coeffs[4] = { 1.0f, 2.0f, 3.0f, 4.0f };

__kernel void update(__global float *out)
{
    size_t i = get_global_id(0);
    coeffs[i & 3] = out[i];
    out[i] *= coeffs[0];
}
