// EXPECT: 8:13: goto is not supported
// goto is not supported by this compiler.
__kernel void find_first(__global const int *in, __global int *out, const int n)
{
    int k;
    for (k = 0; k < n; k++) {
        if (in[k] < 0)
            goto found;
    }
    k = -1;
found:
    out[get_global_id(0)] = k;
}
