// Inverts 3x3 matrices (one per work-item) held in 2-D private arrays
// using the adjugate / determinant formula.

__kernel void invert3x3(__global const float *in,
                        __global float *out,
                        __global int *singular)
{
    size_t base = get_global_id(0) * 9;
    float m[3][3];
    float inv[3][3];

    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[r][c] = in[base + r * 3 + c];

    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3;
            int c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            inv[r][c] = m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1];
        }
    }

    float det = m[0][0] * inv[0][0] + m[0][1] * inv[1][0] + m[0][2] * inv[2][0];
    singular[get_global_id(0)] = fabs(det) < 1e-12f;
    float rdet = (det != 0.0f) ? 1.0f / det : 0.0f;

    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[base + r * 3 + c] = inv[r][c] * rdet;
}
