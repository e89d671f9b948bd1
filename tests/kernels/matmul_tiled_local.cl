// Tiled matrix multiply C = A * B using square __local tiles. Each
// work-group computes a TILE x TILE block of C; the loop over tiles is
// uniform across the group so the barriers inside it are legal.
// Matrix dimensions must be multiples of TILE.

#define TILE 16

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled(__global const float *A,
                  __global const float *B,
                  __global float *C,
                  const int M, const int N, const int K)
{
    __local float Asub[TILE][TILE];
    __local float Bsub[TILE][TILE];

    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int col = get_group_id(0) * TILE + lx;
    const int row = get_group_id(1) * TILE + ly;

    float acc = 0.0f;
    const int numTiles = K / TILE;
    for (int t = 0; t < numTiles; t++) {
        Asub[ly][lx] = A[row * K + t * TILE + lx];
        Bsub[ly][lx] = B[(t * TILE + ly) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int k = 0; k < TILE; k++)
            acc = mad(Asub[ly][k], Bsub[k][lx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M)
        C[row * N + col] = acc;
}
