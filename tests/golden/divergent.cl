// golden: kernel=relax local_size=4x1x1
// A barrier loop left by a divergent break: masked lock step.
__kernel void relax(__global float *vals, __global const int *budget, __local float *buf)
{
    int lid = get_local_id(0);
    float v = vals[get_global_id(0)];
    for (int iter = 0; ; iter++) {
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (iter >= budget[get_global_id(0)])
            break;
        v = 0.5f * (v + buf[(lid + 1) % 4]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    vals[get_global_id(0)] = v;
}
