// EXPECT: 3:44: kernel parameter cannot be a pointer to a pointer
// Kernel arguments may not be pointers to pointers.
__kernel void gather_rows(__global float **rows,
                          __global float *out,
                          const int cols)
{
    size_t r = get_global_id(0);
    out[r] = (float)cols;
}
