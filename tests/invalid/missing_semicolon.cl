// EXPECT: 5:32: expected ';' at end of declaration
// Statement is missing its terminating semicolon.
__kernel void add_one(__global int *data)
{
    size_t i = get_global_id(0)
    data[i] += 1;
}
