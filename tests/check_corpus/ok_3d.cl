// expect: none
// launch: 4,4,4 2,2,2
// args: int*64
__kernel void ids3(__global int *out)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int idx = (z * get_global_size(1) + y) * get_global_size(0) + x;
    out[idx] = get_local_id(0) + 10 * get_group_id(1) + 100 * get_local_id(2) + get_work_dim();
}
