// expect: division-by-zero 7
// launch: 16 16
// args: int*16 int*16=0
__kernel void ratio(__global int *num, __global const int *den)
{
    int i = get_global_id(0);
    num[i] = num[i] / den[i];
}
