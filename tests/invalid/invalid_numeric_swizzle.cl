// EXPECT: 7:22: illegal vector component name 'sG'
// Numeric component indices run from s0 to sF (hex); sG is not valid.
__kernel void pick(__global const float16 *in, __global float *out)
{
    size_t i = get_global_id(0);
    float16 v = in[i];
    out[i] = v.sA + v.sG;
}
