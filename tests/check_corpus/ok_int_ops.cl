// expect: none
// launch: 16 16
// args: int*16 uint*16
__kernel void int_ops(__global int *a, __global uint *u)
{
    int i = get_global_id(0);
    int x = a[i] - 5;
    uint y = u[i] + 1u;
    a[i] = (x / 3) * 7 + x % 3 + (x << 2) + (x >> 1) + abs(x) + min(x, 2) + max(x, -2)
           + mad24(x, 3, 1) + (x & 5) + (x | 2) + (x ^ 9);
    u[i] = (y << 31) + (y >> 1) + rotate(y, 5u) + popcount(y) + clz(y) + y / 3u + y % 5u;
}
