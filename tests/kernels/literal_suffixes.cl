// Uses integer literals in decimal, hex and octal with u/ul/l suffixes,
// character literals (including escapes) and float literals with
// exponents and the f suffix.

__kernel void literals(__global uint *u,
                       __global ulong *ul,
                       __global long *l,
                       __global float *f,
                       __global char *c)
{
    size_t i = get_global_id(0);
    u[i] = 0x1F + 017 + 2u + 0XffU;
    ul[i] = 3ul + 0xFFFFFFFFFFul + 10UL;
    l[i] = -42l + 0x7fL;
    f[i] = 1.0f + 1e-3f + 2.5e2f + .5f + 3.f + 0x1.0p-2f;
    c[i] = (char)('a' + '\n' - '\t' + '\x41' - '\101' + '0');
}
