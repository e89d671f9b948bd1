// expect: none
// launch: 64 16
// args: float*64 float*4
__kernel void reduce_tree(__global const float *in, __global float *out)
{
    __local float s[16];
    int l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (l < stride)
            s[l] += s[l + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = s[0];
}
