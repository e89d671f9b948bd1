// Cooperative relaxation where each work-item has its own iteration
// budget (work-item-dependent trip count). Items that exhaust their
// budget stop updating, but all items keep executing the barriers; the
// group leaves the loop together once a shared "active" counter drops to
// zero, so the break that ends the barrier loop is work-group uniform.

__kernel void relax_until_done(__global float *vals,
                               __global const int *budget,
                               __local float *buf,
                               __local int *active)
{
    int lid = get_local_id(0);
    int lsz = get_local_size(0);
    int gid = get_global_id(0);
    int my_budget = budget[gid];
    float v = vals[gid];
    int iter = 0;

    for (;;) {
        if (lid == 0)
            *active = 0;
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);

        if (iter < my_budget) {
            float n = buf[(lid + 1) % lsz];
            v = 0.5f * (v + n);
            iter++;
            atomic_inc(active);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        int still_active = *active;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (still_active == 0)
            break;
    }

    // Per-item refinement with a work-item-dependent trip count and an
    // early break; no barriers inside this loop.
    for (int k = 0; k < my_budget; k++) {
        if (fabs(v) < 1e-6f)
            break;
        v *= 0.999f;
    }
    vals[gid] = v;
}
