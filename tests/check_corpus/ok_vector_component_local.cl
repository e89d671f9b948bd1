// expect: none
// launch: 32 16
// args: float*32 local=256
// Each work-item writes only the x of its float4 slot and a neighbour reads only that x:
// the y, z and w no one wrote are never read.
__kernel void pass_x(__global float *out, __local float4 *slots)
{
    int me = get_local_id(0);
    int n = get_local_size(0);
    for (int round = 0; round < 2; ++round) {
        slots[me].x = me * 2.0f + round;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] += slots[(me + 1) % n].x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
