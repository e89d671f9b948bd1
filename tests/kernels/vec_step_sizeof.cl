// Queries vector step and object sizes with vec_step and sizeof on both
// types and expressions; results are written out for host-side checks.

typedef struct {
    float4 v;
    int tag;
} Tagged;

__kernel void sizes(__global int *out)
{
    float4 v = (float4)(0.0f);
    float3 w = (float3)(1.0f);
    int16 big = (int16)(0);
    Tagged t;

    out[0] = vec_step(float4);
    out[1] = vec_step(v);
    out[2] = vec_step(w);
    out[3] = vec_step(int16);
    out[4] = vec_step(big.lo);
    out[5] = (int)sizeof(float4);
    out[6] = (int)sizeof(v);
    out[7] = (int)sizeof(float3);
    out[8] = (int)sizeof(Tagged);
    out[9] = (int)sizeof t;
    out[10] = (int)sizeof(t.tag);
    out[11] = (int)sizeof(char) + (int)sizeof(short) + (int)sizeof(long);
    out[12] = (int)(sizeof(size_t) * 8);
}
