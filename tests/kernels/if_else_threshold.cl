// Three-level threshold classification with an if / else-if / else chain;
// also counts how many samples fell in the top band.

__kernel void threshold_classify(__global const float *in,
                                 __global int *label,
                                 __global int *high_count,
                                 const float lo,
                                 const float hi)
{
    size_t i = get_global_id(0);
    float v = in[i];
    if (v < lo) {
        label[i] = -1;
    } else if (v > hi) {
        label[i] = 1;
        atomic_inc(high_count);
    } else {
        label[i] = 0;
    }
}
