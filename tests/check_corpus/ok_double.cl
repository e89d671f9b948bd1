// expect: none
// launch: 16 8
// args: double*16
__kernel void double_math(__global double *d)
{
    int i = get_global_id(0);
    d[i] = sqrt(d[i] + 1.0) * 3.0 - fma(d[i], 2.0, 1.0);
}
