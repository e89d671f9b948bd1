// expect: division-by-zero 7
// launch: 16 16
// args: int*16 int=0
__kernel void wrap(__global int *data, int period)
{
    int i = get_global_id(0);
    data[i] = i % period;
}
