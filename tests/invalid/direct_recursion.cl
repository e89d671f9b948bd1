// EXPECT: 7:16: recursive call to 'factorial' is not allowed
// OpenCL C forbids recursion: factorial calls itself.
uint factorial(uint n)
{
    if (n <= 1u)
        return 1u;
    return n * factorial(n - 1u);
}

__kernel void fact(__global uint *out)
{
    out[get_global_id(0)] = factorial((uint)get_global_id(0));
}
