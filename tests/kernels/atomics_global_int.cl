// Global-memory statistics gathered with the full set of 32-bit atomic
// functions on int and uint counters.

__kernel void global_atomic_stats(__global const int *values,
                                  __global int *stats,
                                  __global uint *ustats,
                                  __global int *lock_slot)
{
    size_t i = get_global_id(0);
    int v = values[i];

    atomic_add(&stats[0], v);
    atomic_sub(&stats[1], v);
    atomic_inc(&stats[2]);
    atomic_dec(&stats[3]);
    atomic_min(&stats[4], v);
    atomic_max(&stats[5], v);
    atomic_and(&stats[6], v | 0x0F);
    atomic_or(&stats[7], v & 0xF0);
    atomic_xor(&stats[8], v);
    int previous = atomic_xchg(&stats[9], v);
    if (previous == v)
        atomic_inc(&stats[10]);

    atomic_min(&ustats[0], (uint)v);
    atomic_max(&ustats[1], (uint)v);
    atomic_add(&ustats[2], 1u);
    atomic_xor(&ustats[3], (uint)i);

    // First work-item to see 0 claims the slot.
    int old = atomic_cmpxchg(lock_slot, 0, (int)i + 1);
    if (old == 0)
        atomic_inc(&stats[11]);
}
