// Double-precision Kahan-compensated partial sums, enabling the
// cl_khr_fp64 extension explicitly with the pragma.

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void kahan_partial_sums(__global const double *in,
                                 __global double *out,
                                 const uint chunk)
{
    size_t g = get_global_id(0);
    __global const double *p = in + g * chunk;
    double sum = 0.0;
    double comp = 0.0;
    for (uint k = 0; k < chunk; k++) {
        double y = p[k] - comp;
        double t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    out[g] = sum;
}

__kernel void daxpy(const double a,
                    __global const double2 *x,
                    __global double2 *y)
{
    size_t i = get_global_id(0);
    y[i] = fma((double2)(a), x[i], y[i]);
}
