// expect: division-by-zero 7
// launch: 8 8
// args: int4*8 int4*8
__kernel void vec_div(__global int4 *a, __global const int4 *b)
{
    int i = get_global_id(0);
    a[i] = a[i] / (b[i] - b[i]);
}
