// EXPECT: 12:26: recursive call cycle through 'is_even' is not allowed
// OpenCL C forbids recursion: is_even and is_odd call each other.
int is_odd(uint n);

int is_even(uint n)
{
    return n == 0u ? 1 : is_odd(n - 1u);
}

int is_odd(uint n)
{
    return n == 0u ? 0 : is_even(n - 1u);
}

__kernel void parity(__global const uint *in, __global int *out)
{
    size_t i = get_global_id(0);
    out[i] = is_even(in[i]);
}
