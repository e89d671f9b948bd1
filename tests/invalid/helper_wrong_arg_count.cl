// EXPECT: 11:28: too few arguments to function call, expected 3, have 2
// Helper takes three arguments but is called with two.
float lerp3(float a, float b, float t)
{
    return a + (b - a) * t;
}

__kernel void blend(__global const float *a, __global float *b)
{
    size_t i = get_global_id(0);
    b[i] = lerp3(a[i], b[i]);
}
