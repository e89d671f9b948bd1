// expect: barrier-divergence 6
// launch: 16 16
// args: float*16
void sync_stage(__local float *t, int l)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    t[l] += 1.0f;
}

__kernel void helper_barrier(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    t[l] = data[l];
    if (data[l] > 0.5f)
        sync_stage(t, l);
    data[l] = t[l];
}
