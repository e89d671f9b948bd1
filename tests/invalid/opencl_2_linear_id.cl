// EXPECT: 4:16: get_local_linear_id is OpenCL C 2.0, with the 1.2 spelling to use instead
__kernel void fill(__global int *out)
{
    size_t l = get_local_linear_id();
    out[get_global_id(0)] = (int)l;
}
