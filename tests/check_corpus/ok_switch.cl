// expect: none
// launch: 16 16
// args: int*16
__kernel void classify(__global int *data)
{
    int i = get_global_id(0);
    int r;
    switch (data[i] % 4) {
    case 0:
        r = 10;
        break;
    case 1:
    case 2:
        r = 20;
        break;
    default:
        r = 30;
    }
    data[i] = r;
}
