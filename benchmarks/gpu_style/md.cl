/* Neighbour-list molecular dynamics, after SHOC's md: a Lennard-Jones force per atom over a
 * fixed number of neighbours, then an explicit update of velocities and positions.
 * The neighbour list is neighbour-major, neigh[j * nAtoms + i], so that the work-items of a
 * warp read consecutive words for the same j; positions are float4 (w unused). */

__kernel void lj_force(__global const float4 *pos, __global const int *neigh,
                       __global float4 *force, int nAtoms, int maxNeighbors,
                       float cutsq, float lj1, float lj2)
{
    int i = get_global_id(0);
    if (i >= nAtoms)
        return;
    float4 ipos = pos[i];
    float4 f = (float4)(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j = 0; j < maxNeighbors; j++) {
        int k = neigh[j * nAtoms + i];
        float4 jpos = pos[k];
        float dx = ipos.x - jpos.x;
        float dy = ipos.y - jpos.y;
        float dz = ipos.z - jpos.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < cutsq) {
            float r2inv = 1.0f / r2;
            float r6inv = r2inv * r2inv * r2inv;
            float s = r2inv * r6inv * (lj1 * r6inv - lj2);
            f.x += dx * s;
            f.y += dy * s;
            f.z += dz * s;
        }
    }
    force[i] = f;
}

__kernel void integrate(__global float4 *pos, __global float4 *vel,
                        __global const float4 *force, int nAtoms, float dt)
{
    int i = get_global_id(0);
    if (i >= nAtoms)
        return;
    float4 v = vel[i] + dt * force[i];  /* unit mass */
    vel[i] = v;
    pos[i] = pos[i] + dt * v;
}
