// expect: data-race 8
// launch: 16 16
// args: float4*16
__kernel void vec_local_race(__global float4 *out)
{
    __local float4 t[8];
    int l = get_local_id(0);
    t[l % 8] = (float4)(l);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = t[l % 8];
}
