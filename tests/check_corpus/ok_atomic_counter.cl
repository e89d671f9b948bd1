// expect: none
// launch: 64 16
// args: int*64 int*1=0 int*64
// order-dependent: the slots atomics hand out differ between devices
__kernel void compact_positive(__global const int *in, __global int *count, __global int *out)
{
    int i = get_global_id(0);
    if (in[i] > 4) {
        int slot = atomic_add(count, 1);
        out[slot] = in[i];
    }
}
