// expect: none
// launch: 16 8
// args: float*16 float*4
__constant float weights[4] = {0.1f, 0.2f, 0.3f, 0.4f};

__kernel void weighted(__global float *data, __constant float *extra)
{
    int i = get_global_id(0);
    data[i] = data[i] * weights[i % 4] + extra[i % 4];
}
