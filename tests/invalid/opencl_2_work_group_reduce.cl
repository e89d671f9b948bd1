// EXPECT: 4:15: work_group_reduce_add is an OpenCL C 2.0 collective
__kernel void sum(__global const float *in, __global float *out)
{
    float s = work_group_reduce_add(in[get_global_id(0)]);
    if (get_local_id(0) == 0) out[get_group_id(0)] = s;
}
