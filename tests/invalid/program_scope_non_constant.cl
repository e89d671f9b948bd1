// EXPECT: 3:7: program scope variable must reside in constant address space
// Program-scope variables must be in the __constant address space.
float global_scale = 2.0f;

__kernel void apply(__global float *data)
{
    size_t i = get_global_id(0);
    data[i] *= global_scale;
}
