// expect: uninitialized-read 11
// launch: 16 16
// args: float*16
__kernel void maybe_set(__global float *data)
{
    float best;
    int i = get_global_id(0);
    if (data[i] > 0.5f)
        best = data[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[i] = best;
}
