// EXPECT: 7:18: invalid operands to binary expression: % requires integer operands
// The % operator requires integer operands; use fmod for floats.
__kernel void wrap(__global float *angle)
{
    size_t i = get_global_id(0);
    float a = angle[i];
    angle[i] = a % 6.2831853f;
}
