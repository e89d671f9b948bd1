// Inclusive prefix sum (Hillis-Steele) of floats within one work-group,
// double-buffered in local memory. Work-group size must equal n.

__kernel void scan_hillis_steele(__global const float *in,
                                 __global float *out,
                                 __local float *buf)
{
    int lid = get_local_id(0);
    int n = get_local_size(0);
    int pout = 0;
    int pin = 1;

    buf[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int offset = 1; offset < n; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (lid >= offset)
            buf[pout * n + lid] = buf[pin * n + lid] + buf[pin * n + lid - offset];
        else
            buf[pout * n + lid] = buf[pin * n + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    out[get_global_id(0)] = buf[pout * n + lid];
}
