// Element-wise addition of two float vectors: c[i] = a[i] + b[i].
// Uses restrict-qualified const inputs and a bounds check on n.

__kernel void vector_add(__global const float * restrict a,
                         __global const float * restrict b,
                         __global float * restrict c,
                         const uint n)
{
    size_t i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
