// expect: none
// launch: 32 16
// args: float*32 int*32
typedef struct { float value; int index; } pair;

__kernel void argmax_group(__global const float *v, __global int *best)
{
    __local pair p[16];
    int l = get_local_id(0);
    p[l].value = v[get_global_id(0)];
    p[l].index = get_global_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 8; s > 0; s >>= 1) {
        if (l < s && p[l + s].value > p[l].value)
            p[l] = p[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    best[get_global_id(0)] = p[0].index;
}
