// Moves data between scalar arrays and vectors of width 2, 4, 8 and 16
// with vloadn / vstoren, scaling on the way through.

__kernel void vload_vstore_all(__global const float *src,
                               __global float *dst,
                               __global const int *isrc,
                               __global int *idst,
                               const float scale)
{
    size_t i = get_global_id(0);

    float2 a = vload2(i, src);
    vstore2(a * scale, i, dst);

    float4 b = vload4(i, src + 2);
    vstore4(b * scale, i, dst + 2);

    float8 c = vload8(i, src + 6);
    vstore8(c * scale, i, dst + 6);

    float16 d = vload16(i, src + 14);
    vstore16(d * scale, i, dst + 14);

    int16 e = vload16(i, isrc);
    int8 f = vload8(0, isrc + 16 * i);
    e.lo += f;
    vstore16(e, i, idst);
}
