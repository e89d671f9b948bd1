// expect: none
// launch: 32 16
// args: float*32 int=1
__kernel void uniform_branch_barrier(__global float *data, int flip)
{
    __local float t[16];
    int l = get_local_id(0);
    t[l] = data[get_global_id(0)];
    if (flip) {
        barrier(CLK_LOCAL_MEM_FENCE);
        data[get_global_id(0)] = t[15 - l];
    } else {
        barrier(CLK_LOCAL_MEM_FENCE);
        data[get_global_id(0)] = t[l];
    }
}
