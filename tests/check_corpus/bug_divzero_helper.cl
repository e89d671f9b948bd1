// expect: division-by-zero 6
// launch: 16 16
// args: uint*16
uint per_item(uint total, uint parts)
{
    return total / parts;
}

__kernel void split(__global uint *out)
{
    uint l = get_local_id(0);
    out[get_global_id(0)] = per_item(100u, l);
}
