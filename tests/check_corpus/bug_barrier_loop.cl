// expect: barrier-divergence 10
// launch: 16 16
// args: float*16
__kernel void divergent_trip_count(__global float *data)
{
    __local float t[16];
    int l = get_local_id(0);
    for (int k = 0; k < l % 4 + 1; ++k) {
        t[l] = data[l] + k;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    data[l] = t[l];
}
