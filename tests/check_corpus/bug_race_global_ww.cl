// expect: data-race 7
// launch: 64 16
// args: int*64 int*8
__kernel void bucket_store(__global const int *in, __global int *buckets)
{
    int i = get_global_id(0);
    buckets[i % 8] = in[i] + i;
}
