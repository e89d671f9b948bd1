/* Array-of-structures particle update: a particle is 8 floats (position xyz, velocity xyz,
 * mass, padding to 32 bytes), one work-item per particle, a launch per time step.
 * Accelerations come from softened point attractors (xyz, strength) and a drag that
 * depends on the particle's mass. */

#define FIELDS 8

__kernel void advance(__global float *p, __constant float4 *attractors, int nParticles,
                      int nAttractors, float dt, float soft, float drag)
{
    int i = get_global_id(0);
    if (i >= nParticles)
        return;
    int base = i * FIELDS;
    float x = p[base + 0], y = p[base + 1], z = p[base + 2];
    float vx = p[base + 3], vy = p[base + 4], vz = p[base + 5];
    float m = p[base + 6];

    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int k = 0; k < nAttractors; k++) {
        float4 a = attractors[k];
        float dx = a.x - x, dy = a.y - y, dz = a.z - z;
        float r2 = dx * dx + dy * dy + dz * dz + soft;
        float inv = 1.0f / sqrt(r2);
        float s = a.w * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    float d = drag / m;
    vx += dt * (ax - d * vx);
    vy += dt * (ay - d * vy);
    vz += dt * (az - d * vz);
    p[base + 0] = x + dt * vx;
    p[base + 1] = y + dt * vy;
    p[base + 2] = z + dt * vz;
    p[base + 3] = vx;
    p[base + 4] = vy;
    p[base + 5] = vz;
}
