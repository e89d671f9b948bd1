// Explicit Euler particle update in array-of-structs layout with a
// 16-byte aligned particle record.

typedef struct __attribute__((aligned(16))) {
    float4 position;
    float4 velocity;
    float mass;
    int alive;
    float age;
    float pad;
} Particle;

__kernel void particles_aos_step(__global Particle *particles,
                                 const float4 gravity,
                                 const float dt,
                                 const float max_age)
{
    size_t i = get_global_id(0);
    Particle p = particles[i];
    if (!p.alive)
        return;

    p.velocity += gravity * dt;
    p.position += p.velocity * dt;
    p.age += dt;
    if (p.age > max_age)
        p.alive = 0;
    particles[i] = p;
}

__kernel void particles_aos_energy(__global const Particle *particles,
                                   __global float *energy)
{
    size_t i = get_global_id(0);
    __global const Particle *p = &particles[i];
    float3 v = p->velocity.xyz;
    energy[i] = 0.5f * p->mass * dot(v, v);
}
