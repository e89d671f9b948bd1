// expect: data-race 6
// launch: 16 16
// args: float*16 float*16
void put(__local float *t, int at, float v)
{
    t[at] = v;
}

__kernel void helper_race(__global const float *in, __global float *out)
{
    __local float t[16];
    int l = get_local_id(0);
    put(t, l, in[l]);
    put(t, 15 - l, in[l] + 1.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = t[l];
}
