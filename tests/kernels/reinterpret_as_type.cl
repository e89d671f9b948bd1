// Bit-level reinterpretation with as_float, as_uint, as_int4: flips the
// sign of floats via integer XOR and computes an order-preserving key.

__kernel void sign_flip_and_keys(__global float *data,
                                 __global uint *keys,
                                 __global float4 *vdata)
{
    size_t i = get_global_id(0);
    float x = data[i];
    uint bits = as_uint(x);
    data[i] = as_float(bits ^ 0x80000000u);

    uint mask = (bits & 0x80000000u) ? 0xFFFFFFFFu : 0x80000000u;
    keys[i] = bits ^ mask;

    float4 v = vdata[i];
    int4 iv = as_int4(v);
    iv &= (int4)(0x7FFFFFFF);
    vdata[i] = as_float4(iv);
}
