// Explicit Euler particle update in struct-of-arrays layout: each
// component lives in its own array for fully coalesced access.

__kernel void particles_soa_step(__global float *px, __global float *py,
                                 __global float *pz,
                                 __global float *vx, __global float *vy,
                                 __global float *vz,
                                 __global const float *inv_mass,
                                 const float gravity,
                                 const float dt,
                                 const uint count)
{
    uint i = get_global_id(0);
    if (i >= count)
        return;
    float w = inv_mass[i];
    vy[i] -= (w > 0.0f) ? gravity * dt : 0.0f;
    px[i] += vx[i] * dt;
    py[i] += vy[i] * dt;
    pz[i] += vz[i] * dt;
    if (py[i] < 0.0f) {
        py[i] = -py[i];
        vy[i] = -0.8f * vy[i];
    }
}
