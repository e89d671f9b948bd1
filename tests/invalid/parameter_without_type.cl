// EXPECT: 4:13: parameter 'n' of 'square' has no type
// An old-style identifier list: OpenCL C has no implicit int, and the
// analysis ended in an AttributeError reading the parameter's declarator.
uint square(n)
{
    return n * n;
}

__kernel void squares(__global uint *out)
{
    out[get_global_id(0)] = square((uint)get_global_id(0));
}
