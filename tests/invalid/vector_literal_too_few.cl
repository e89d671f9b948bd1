// EXPECT: 6:22: too few elements in vector literal (expected 4, have 2)
// A float4 literal needs four components (or a single scalar); two given.
__kernel void fill(__global float4 *out)
{
    size_t i = get_global_id(0);
    out[i] = (float4)(1.0f, 2.0f);
}
