// expect: barrier-divergence 11
// launch: 64 16
// args: float*64
__kernel void second_group_leaves(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    if (get_group_id(0) == 2 && l >= 12)
        return;
    t[l] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = t[l] + 1.0f;
}
