// expect: none
// launch: 64 32
// args: float*64 local=128 int=4
__kernel void smooth(__global float *data, __local float *tmp, int sweeps)
{
    int l = get_local_id(0);
    int n = get_local_size(0);
    float v = data[get_global_id(0)];
    for (int s = 0; s < sweeps; ++s) {
        tmp[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        float left = tmp[l > 0 ? l - 1 : l];
        float right = tmp[l < n - 1 ? l + 1 : l];
        barrier(CLK_LOCAL_MEM_FENCE);
        v = 0.25f * left + 0.5f * v + 0.25f * right;
    }
    data[get_global_id(0)] = v;
}
