// expect: data-race 9
// launch: 32 16
// args: float*32 float*32
__kernel void read_before_wait(__global const float *in, __global float *out)
{
    __local float tile[16];
    event_t copied = async_work_group_copy(tile, in + get_group_id(0) * 16, 16, 0);
    int l = get_local_id(0);
    float early = tile[(l + 1) % 16];
    wait_group_events(1, &copied);
    out[get_global_id(0)] = early + tile[l];
}
