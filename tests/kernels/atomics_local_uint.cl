// Per-group bit statistics computed with atomic operations on __local
// uint and int counters, then published with one global write per group.

__kernel void local_atomic_stats(__global const uint *keys,
                                 __global uint4 *group_stats,
                                 __global int *group_balance)
{
    __local uint lmin, lmax, lor, land;
    __local uint lcount, lxor, lswap, lclaim;
    __local int balance;
    uint lid = get_local_id(0);

    if (lid == 0) {
        lmin = 0xFFFFFFFFu;
        lmax = 0u;
        lor = 0u;
        land = 0xFFFFFFFFu;
        lcount = 0u;
        lxor = 0u;
        lswap = 0u;
        lclaim = 0u;
        balance = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint k = keys[get_global_id(0)];
    atomic_min(&lmin, k);
    atomic_max(&lmax, k);
    atomic_or(&lor, k);
    atomic_and(&land, k);
    atomic_xor(&lxor, k);
    atomic_add(&lcount, k & 1u);
    atomic_sub(&lcount, 0u);
    atomic_xchg(&lswap, k);
    atomic_cmpxchg(&lclaim, 0u, lid + 1u);
    if (k & 2u)
        atomic_inc(&balance);
    else
        atomic_dec(&balance);
    barrier(CLK_LOCAL_MEM_FENCE);

    if (lid == 0) {
        group_stats[get_group_id(0)] = (uint4)(lmin, lmax, lor ^ land, lcount + (lxor & 1u));
        group_balance[get_group_id(0)] = balance;
    }
}
