// expect: none
// launch: 16 16
// args: int4*16 int4*16
__kernel void permute(__global const int4 *in, __global int4 *out)
{
    int i = get_global_id(0);
    int4 v = in[i];
    uint4 order = (uint4)(3, 2, 1, 0);
    int4 r = shuffle(v, order);
    int8 both = shuffle2(v, r, (uint8)(0, 4, 1, 5, 2, 6, 3, 7));
    out[i] = r + both.lo - both.hi;
}
