// EXPECT: 9:11: cannot assign to const-qualified variable 'limit'
// A const-qualified local variable cannot be modified.
__kernel void count_up(__global int *out, const int n)
{
    const int limit = n * 2;
    int acc = 0;
    for (int k = 0; k < n; k++)
        acc += k;
    limit = acc;
    out[get_global_id(0)] = limit;
}
