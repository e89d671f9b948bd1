// EXPECT: 8:9: break statement not in loop or switch statement
// break is only valid inside a loop or switch.
__kernel void clip(__global float *data, const float limit)
{
    size_t i = get_global_id(0);
    if (data[i] > limit) {
        data[i] = limit;
        break;
    }
}
