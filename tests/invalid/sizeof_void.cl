// EXPECT: 6:19: invalid application of sizeof to a void type
// sizeof cannot be applied to void.
__kernel void sizes(__global int *out)
{
    out[0] = (int)sizeof(int);
    out[1] = (int)sizeof(void);
}
