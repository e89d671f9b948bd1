// expect: out-of-bounds 9
// launch: 8 8
// args: int*8
__kernel void fill_private(__global int *out)
{
    int acc[8];
    int i = get_global_id(0);
    for (int k = 0; k <= 8; ++k)
        acc[k] = k * i;
    out[i] = acc[3];
}
