// expect: data-race 10
// launch: 32 16
// args: float*32 int=3
__kernel void sweeps_one_barrier(__global float *data, int sweeps)
{
    __local float t[16];
    int l = get_local_id(0);
    float v = data[get_global_id(0)];
    for (int s = 0; s < sweeps; ++s) {
        t[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = 0.5f * (v + t[(l + 1) % 16]);
    }
    data[get_global_id(0)] = v;
}
