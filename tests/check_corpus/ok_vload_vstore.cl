// expect: none
// launch: 8 8
// args: float*32 float*32
__kernel void vload_store(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    float4 v = vload4(i, in);
    vstore4(v * v, i, out);
}
