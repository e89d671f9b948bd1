// expect: none
// launch: 16 16
// args: int*16
__kernel void pointer_walk(__global int *out)
{
    int acc[6] = {1, 2, 3, 4, 5, 6};
    int *p = acc;
    int s = 0;
    for (int k = 0; k < 6; ++k)
        s += *p++;
    out[get_global_id(0)] = s + get_global_id(0);
}
