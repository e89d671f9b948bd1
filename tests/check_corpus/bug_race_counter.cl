// expect: data-race 7
// launch: 32 32
// args: int*1
__kernel void plain_counter(__global int *count)
{
    if (get_global_id(0) % 3 == 0)
        count[0] = count[0] + 1;
}
