// expect: out-of-bounds 7
// launch: 16 16
// args: float*62 float4*16
__kernel void vload_tail(__global const float *in, __global float4 *out)
{
    int i = get_global_id(0);
    out[i] = vload4(i, in);
}
