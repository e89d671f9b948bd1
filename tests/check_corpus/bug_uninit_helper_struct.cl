// expect: uninitialized-read 8
// launch: 16 16
// args: float*16
typedef struct { float sum; int count; } acc_t;

void add(acc_t *a, float v)
{
    a->sum += v;
    a->count += 1;
}

__kernel void mean_without_init(__global float *data)
{
    acc_t a;
    int i = get_global_id(0);
    add(&a, data[i]);
    data[i] = a.sum / a.count;
}
