// expect: data-race 8
// launch: 16 16
// args: int*16
__kernel void local_slot_clash(__global int *out)
{
    __local int slots[8];
    int l = get_local_id(0);
    slots[l / 2] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = slots[l / 2];
}
