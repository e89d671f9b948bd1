// Lane permutations with shuffle and shuffle2: reverses float4 lanes,
// broadcasts a lane, and interleaves two int8 vectors.

__kernel void permute_lanes(__global float4 *a,
                            __global const int8 *x,
                            __global const int8 *y,
                            __global int8 *zipped,
                            __global float8 *wide)
{
    size_t i = get_global_id(0);
    float4 v = a[i];
    uint4 rev = (uint4)(3, 2, 1, 0);
    a[i] = shuffle(v, rev) + shuffle(v, (uint4)(0));

    int8 p = x[i];
    int8 q = y[i];
    uint8 mask = (uint8)(0, 8, 1, 9, 2, 10, 3, 11);
    zipped[i] = shuffle2(p, q, mask);

    float8 w = shuffle2(v, v * 2.0f, (uint8)(0, 1, 2, 3, 4, 5, 6, 7));
    wide[i] = w;
}
