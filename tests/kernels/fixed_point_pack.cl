// Packs pairs of floats into 16.16 fixed point and into half storage,
// reading the packed words back through a union of uint and ushort2.

typedef union {
    uint word;
    ushort2 halves;
    uchar4 bytes;
} Packed32;

__kernel void pack_pairs(__global const float *in,
                         __global uint *packed,
                         __global half *halves,
                         __global int2 *fixed)
{
    size_t i = get_global_id(0);
    float2 v = vload2(i, in);

    int2 fx = convert_int2_sat_rte(v * 65536.0f);
    fixed[i] = fx;

    Packed32 p;
    p.halves = convert_ushort2_sat(fabs(v) * 256.0f);
    unsigned int w = p.word;
    int round = 0;
    do {
        w = (w >> 1) ^ (w & 1u ? 0xEDB88320u : 0u);
    } while (++round < 8);
    packed[i] = w ^ (uint)p.bytes.s3;

    vstore_half(v.x, 2 * i, halves);
    vstore_half(v.y, 2 * i + 1, halves);
}
