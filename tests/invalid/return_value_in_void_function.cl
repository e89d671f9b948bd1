// EXPECT: 6:5: void function 'store_twice' should not return a value
// A void helper must not return a value.
void store_twice(__global float *dst, size_t i, float v)
{
    dst[i] = 2.0f * v;
    return v;
}

__kernel void twice(__global float *data)
{
    size_t i = get_global_id(0);
    store_twice(data, i, data[i]);
}
