// Greatest common divisor of pairs of unsigned integers using Euclid's
// algorithm in a do/while loop.

uint gcd_u(uint a, uint b)
{
    if (b == 0u)
        return a;
    uint r;
    do {
        r = a % b;
        a = b;
        b = r;
    } while (r != 0u);
    return a;
}

__kernel void pairwise_gcd(__global const uint2 *pairs,
                           __global uint *result)
{
    size_t i = get_global_id(0);
    uint2 p = pairs[i];
    result[i] = gcd_u(p.x, p.y);
}
