// golden: kernel=reduce local_size=16x1x1
// A barrier tree reduction in local memory: uniform barrier loop in lock step.
__kernel void reduce(__global const float *in, __global float *out, __local float *tmp)
{
    size_t lid = get_local_id(0);
    tmp[lid] = in[get_global_id(0)];
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s)
            tmp[lid] += tmp[lid + s];
    }
    if (lid == 0)
        out[get_group_id(0)] = tmp[0];
}
