// EXPECT: 6:25: use of undeclared identifier 'scale_factor'
// Scales a buffer but refers to a variable that was never declared.
__kernel void scale(__global float *data, const float factor)
{
    size_t i = get_global_id(0);
    data[i] = data[i] * scale_factor;
}
