// expect: none
// launch: 64 16
// args: float*64
__kernel void odd_groups_reverse(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    if (get_group_id(0) % 2 == 1) {
        t[l] = data[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        data[get_global_id(0)] = t[15 - l];
    } else {
        t[15 - l] = 2.0f * data[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE);
        data[get_global_id(0)] = t[l];
    }
}
