// expect: none
// launch: 16 4
// args: int*16
__kernel void collatz_steps(__global int *data)
{
    int i = get_global_id(0);
    int n = data[i] + 1;
    int steps = 0;
    while (n != 1) {
        n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
        steps++;
        if (steps > 1000)
            break;
    }
    int k = 0;
    do {
        k += 2;
        if (k == 6)
            continue;
    } while (k < 10);
    data[i] = steps + k;
}
