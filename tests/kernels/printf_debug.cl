// Debug output with printf, including string, integer, float and vector
// conversion specifiers. Only the first work-item prints.

__kernel void debug_print(__global const float4 *v,
                          __global const int2 *p,
                          const int n)
{
    size_t gid = get_global_id(0);
    if (gid != 0)
        return;

    float4 f = v[0];
    int2 q = p[0];
    printf("%s: n=%d first=%f\n", "debug_print", n, f.x);
    printf("vec=%v4hlf pair=%v2hld\n", f, q);
    printf("hex=%#x uint=%u sci=%e\n", n, (uint)n, f.y);
    printf("%2.3v4hlf\n", f * 2.0f);
}
