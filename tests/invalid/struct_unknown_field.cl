// EXPECT: 11:27: no member named 'velocity' in 'Particle'
// struct Particle has no member named velocity.
typedef struct {
    float4 position;
    float mass;
} Particle;

__kernel void advance(__global Particle *p, const float dt)
{
    size_t i = get_global_id(0);
    p[i].position += p[i].velocity * dt;
}
