// Number of Collatz steps for each starting value, computed with a while
// loop on 64-bit unsigned integers.

__kernel void collatz_steps(__global const ulong *start,
                            __global uint *steps)
{
    size_t i = get_global_id(0);
    ulong v = start[i];
    uint count = 0;
    while (v > 1ul) {
        if (v & 1ul)
            v = 3ul * v + 1ul;
        else
            v >>= 1;
        ++count;
        if (count == 0xFFFFu)
            break;
    }
    steps[i] = count;
}
