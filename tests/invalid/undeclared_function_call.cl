// EXPECT: 7:15: call to undeclared function 'smoothing_filter'
// Calls a helper that is neither declared nor defined.
__kernel void smooth(__global float *data)
{
    size_t i = get_global_id(0);
    float v = data[i];
    data[i] = smoothing_filter(v, 0.5f);
}
