// 3-D 7-point Jacobi stencil on an nx*ny*nz grid using a 3-D NDRange.
// Boundary cells are copied unchanged.

inline size_t idx3(size_t x, size_t y, size_t z, size_t nx, size_t ny)
{
    return (z * ny + y) * nx + x;
}

__kernel void stencil7(__global const float *in,
                       __global float *out,
                       const float c0,
                       const float c1)
{
    size_t x = get_global_id(0);
    size_t y = get_global_id(1);
    size_t z = get_global_id(2);
    size_t nx = get_global_size(0);
    size_t ny = get_global_size(1);
    size_t nz = get_global_size(2);
    size_t c = idx3(x, y, z, nx, ny);

    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[c] = in[c];
        return;
    }

    float nb = in[idx3(x - 1, y, z, nx, ny)] + in[idx3(x + 1, y, z, nx, ny)]
             + in[idx3(x, y - 1, z, nx, ny)] + in[idx3(x, y + 1, z, nx, ny)]
             + in[idx3(x, y, z - 1, nx, ny)] + in[idx3(x, y, z + 1, nx, ny)];
    out[c] = c0 * in[c] + c1 * nb;
}
