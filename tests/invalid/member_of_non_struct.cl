// EXPECT: 7:19: member reference base type int is not a structure or union
// Member access on a scalar int is invalid.
__kernel void get_field(__global const int *in, __global int *out)
{
    size_t i = get_global_id(0);
    int value = in[i];
    out[i] = value.count;
}
