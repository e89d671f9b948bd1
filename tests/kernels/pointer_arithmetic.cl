// Run-length encodes rows of bytes using pointer walking: pointer
// increment, pointer differences (ptrdiff_t) and pre/post increments.

__kernel void rle_rows(__global const uchar *src,
                       __global uchar2 *dst,
                       __global int *run_counts,
                       const int row_len)
{
    size_t row = get_global_id(0);
    __global const uchar *p = src + row * row_len;
    __global const uchar *end = p + row_len;
    __global uchar2 *out = dst + row * row_len;
    __global uchar2 *out_start = out;

    while (p < end) {
        uchar value = *p;
        __global const uchar *run = p;
        while (run < end && *run == value && (run - p) < 255)
            ++run;
        ptrdiff_t len = run - p;
        *out++ = (uchar2)(value, (uchar)len);
        p = run;
    }
    run_counts[row] = (int)(out - out_start);

    int k = 0;
    int first = k++;
    int second = ++k;
    run_counts[row] += first * second;
}
