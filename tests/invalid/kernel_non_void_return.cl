// EXPECT: 3:14: kernel must have void return type
// Kernels must return void.
__kernel int compute(__global int *out)
{
    size_t i = get_global_id(0);
    out[i] = (int)i;
    return 0;
}
