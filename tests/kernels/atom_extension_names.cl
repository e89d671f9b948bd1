// Same counting pattern written with the cl_khr_*_int32_*_atomics
// extension names (atom_*), on global and local int/uint.

#pragma OPENCL EXTENSION cl_khr_global_int32_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_global_int32_extended_atomics : enable
#pragma OPENCL EXTENSION cl_khr_local_int32_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_local_int32_extended_atomics : enable

__kernel void atom_counters(__global const int *in,
                            __global int *g,
                            __global uint *gu)
{
    __local int lsum;
    __local uint lbits;
    if (get_local_id(0) == 0) {
        lsum = 0;
        lbits = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    int v = in[get_global_id(0)];
    atom_add(&lsum, v);
    atom_or(&lbits, (uint)v);
    atom_add(&g[0], v);
    atom_sub(&g[1], v);
    atom_inc(&g[2]);
    atom_dec(&g[3]);
    atom_xchg(&g[4], v);
    atom_cmpxchg(&g[5], 0, v);
    atom_min(&g[6], v);
    atom_max(&g[7], v);
    atom_and(&gu[0], (uint)v);
    atom_xor(&gu[1], (uint)v);
    barrier(CLK_LOCAL_MEM_FENCE);

    if (get_local_id(0) == 0) {
        atom_add(&g[8], lsum);
        atom_or(&gu[2], lbits);
    }
}
