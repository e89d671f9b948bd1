// expect: barrier-divergence 11
// launch: 32 16
// args: float*30 int=30
__kernel void return_before_barrier(__global float *data, int n)
{
    __local float t[16];
    int i = get_global_id(0);
    if (i >= n)
        return;
    t[get_local_id(0)] = data[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[i] = t[get_local_id(0)];
}
