// Bit tricks on 32- and 64-bit words: population count, leading zeros,
// bit reversal with masks, rotate and Morton (Z-order) interleaving.

uint reverse_bits(uint x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    return (x >> 16) | (x << 16);
}

uint spread_bits(uint v)
{
    v &= 0x0000FFFFu;
    v = (v | (v << 8)) & 0x00FF00FFu;
    v = (v | (v << 4)) & 0x0F0F0F0Fu;
    v = (v | (v << 2)) & 0x33333333u;
    v = (v | (v << 1)) & 0x55555555u;
    return v;
}

__kernel void bit_tricks(__global const uint *words,
                         __global const ulong *wide,
                         __global uint4 *out,
                         __global uint *morton)
{
    size_t i = get_global_id(0);
    uint w = words[i];
    ulong q = wide[i];
    uint lz = clz(w);
    uint pc = popcount(w) + (uint)popcount(q);
    uint rv = reverse_bits(w);
    uint rt = rotate(w, 8u) ^ (uint)(rotate(q, (ulong)13) >> 32);
    out[i] = (uint4)(lz, pc, rv, rt);
    morton[i] = spread_bits(w & 0xFFFFu) | (spread_bits(w >> 16) << 1);
}
