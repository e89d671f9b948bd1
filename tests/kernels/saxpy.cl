// Single-precision a*x plus y, written with the underscore-free
// qualifiers and the fma builtin: y[i] = alpha * x[i] + y[i].

kernel void saxpy(const float alpha,
                  global const float *x,
                  global float *y,
                  const int n)
{
    int i = (int)get_global_id(0);
    if (i >= n)
        return;
    y[i] = fma(alpha, x[i], y[i]);
}

// Vectorised variant processing four elements per work-item.
kernel void saxpy4(const float alpha,
                   global const float4 *x,
                   global float4 *y)
{
    size_t i = get_global_id(0);
    y[i] = mad((float4)(alpha), x[i], y[i]);
}
