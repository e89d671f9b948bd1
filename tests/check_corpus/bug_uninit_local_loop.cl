// expect: uninitialized-read 12
// launch: 16 16
// args: float*16
__kernel void scan_reads_ahead(__global float *data)
{
    __local float t[17];
    int l = get_local_id(0);
    t[l] = data[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (int k = 0; k < 2; ++k)
        s += t[l + k];
    data[l] = s;
}
