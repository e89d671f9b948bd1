// expect: none
// launch: 64 16
// args: float*64 float*64
__kernel void async_neighbours(__global const float *in, __global float *out)
{
    __local float tile[16];
    event_t copied = async_work_group_copy(tile, in + get_group_id(0) * 16, 16, 0);
    wait_group_events(1, &copied);
    int l = get_local_id(0);
    out[get_global_id(0)] = tile[l] + tile[(l + 1) % 16];
}
