// Double-precision trapezoid integration of f(x) = exp(-x^2) without an
// explicit extension pragma (double is an optional core feature in 1.2).

double integrand(double x)
{
    return exp(-x * x);
}

__kernel void trapezoid(__global double *partial,
                        const double a,
                        const double b,
                        const int steps_per_item)
{
    size_t gid = get_global_id(0);
    size_t total = get_global_size(0) * (size_t)steps_per_item;
    double h = (b - a) / (double)total;
    double acc = 0.0;
    for (int k = 0; k < steps_per_item; k++) {
        double x0 = a + h * (double)(gid * steps_per_item + k);
        acc += 0.5 * h * (integrand(x0) + integrand(x0 + h));
    }
    partial[gid] = acc;
}
