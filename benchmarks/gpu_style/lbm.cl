/* One D2Q9 lattice-Boltzmann step (pull streaming, BGK collision, full-way bounce-back on
 * solid cells, periodic edges). The nine distribution values of a cell are stored together,
 * f[cell * 9 + q]: the cell-major (array-of-structures) layout of Parboil's base lbm.
 * The host ping-pongs two buffers, a launch per step. */

__constant int CX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant int CY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
__constant int OPP[9] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
__constant float W[9] = {4.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f,
                         1.0f / 36.0f, 1.0f / 36.0f, 1.0f / 36.0f, 1.0f / 36.0f};

__kernel void lbm_step(__global const float *src, __global float *dst,
                       __global const uchar *solid, int nx, int ny, float omega)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    int cell = y * nx + x;

    float f[9];
    for (int q = 0; q < 9; q++) {
        int xs = x - CX[q];
        int ys = y - CY[q];
        if (xs < 0) xs += nx;
        if (xs >= nx) xs -= nx;
        if (ys < 0) ys += ny;
        if (ys >= ny) ys -= ny;
        f[q] = src[(ys * nx + xs) * 9 + q];
    }

    if (solid[cell]) {
        for (int q = 0; q < 9; q++)
            dst[cell * 9 + q] = f[OPP[q]];
        return;
    }

    float rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int q = 0; q < 9; q++) {
        rho += f[q];
        ux += CX[q] * f[q];
        uy += CY[q] * f[q];
    }
    ux /= rho;
    uy /= rho;
    float usq = 1.5f * (ux * ux + uy * uy);
    for (int q = 0; q < 9; q++) {
        float cu = 3.0f * (CX[q] * ux + CY[q] * uy);
        float feq = W[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        dst[cell * 9 + q] = f[q] + omega * (feq - f[q]);
    }
}
