// EXPECT: 5:17: __local variable cannot have an initializer
// __local variables cannot be initialized at their declaration.
__kernel void counter(__global int *out)
{
    __local int count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&count);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_group_id(0)] = count;
}
