// expect: uninitialized-read 11
// launch: 16 16
// args: float*16
// A struct copied whole before any of its fields was set, then a field of the copy read.
typedef struct { float sum; int count; } acc_t;

__kernel void copy_unset(__global float *data)
{
    int i = get_global_id(0);
    acc_t a;
    acc_t b = a;
    data[i] = b.sum;
}
