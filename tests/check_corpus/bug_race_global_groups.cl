// expect: data-race 8
// launch: 64 16
// args: float*64 float*64
__kernel void groups_overlap(__global float *data, __global float *out)
{
    int i = get_global_id(0);
    data[i] = data[i] * 2.0f;
    out[i] = data[(i + 16) % 64];
}
