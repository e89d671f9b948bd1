// EXPECT: 11:31: too many arguments to function call, expected 1, have 2
// Helper takes one argument but is called with two.
float square(float x)
{
    return x * x;
}

__kernel void squares(__global float *data)
{
    size_t i = get_global_id(0);
    data[i] = square(data[i], 2.0f);
}
