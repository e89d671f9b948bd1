// expect: none
// launch: 16 8
// args: float*64 float=0.5
typedef struct { float x, y, vx, vy; } particle;

particle advance(particle p, float dt)
{
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    return p;
}

__kernel void move(__global particle *ps, float dt)
{
    int i = get_global_id(0);
    particle p = ps[i];
    ps[i] = advance(p, dt);
}
