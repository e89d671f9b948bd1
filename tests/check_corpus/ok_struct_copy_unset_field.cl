// expect: none
// launch: 64 16
// args: float*64 float*64
// A struct copied whole with a field no one set (a pad, as in PyOpenCL's struct reductions):
// C copies it without fault; only the fields set are read.
typedef struct { float lo; float hi; int pad; } range_t;

range_t make_range(float x)
{
    range_t r;
    r.lo = x;
    r.hi = x;
    return r;
}

range_t join(range_t a, range_t b)
{
    range_t r = a;
    if (b.lo < r.lo) r.lo = b.lo;
    if (b.hi > r.hi) r.hi = b.hi;
    return r;
}

__kernel void spread(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    range_t r = join(make_range(in[i]), make_range(in[(i + 1) % 64]));
    out[i] = r.hi - r.lo;
}
