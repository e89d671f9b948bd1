// expect: out-of-bounds 9
// launch: 16 16
// args: float*32 float*16
typedef struct { float x; float y; } pair;

__kernel void struct_tail(__global const pair *in, __global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i + 1].y;
}
