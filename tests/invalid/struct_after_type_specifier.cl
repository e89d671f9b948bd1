// EXPECT: 7:17: cannot combine 'union pad' with the type 'float' before it
// Two type specifiers for one member: pycparser read the union's name as a
// typedef's and the build ended in an AttributeError.
typedef struct {
    float4 position;
    float mass;
    float union pad;
} Particle;

__kernel void weigh(__global Particle *p, __global float *out)
{
    out[get_global_id(0)] = p[get_global_id(0)].mass;
}
