// EXPECT: 10:14: no matching overload for builtin 'dot' with int arguments
// dot() is only defined for floating-point scalars and vectors.
__kernel void int_dot(__global const int *a,
                      __global const int *b,
                      __global int *out)
{
    size_t i = get_global_id(0);
    int x = a[i];
    int y = b[i];
    out[i] = dot(x, y);
}
