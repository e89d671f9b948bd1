// One radix-2 decimation-in-time butterfly stage of a complex FFT.
// Launched with n/2 work-items; span is the half-size of the butterfly.

#define PI_F 3.14159265358979f

__kernel void fft_radix2_stage(__global float2 *data,
                               const uint span,
                               const int inverse)
{
    uint k = get_global_id(0);
    uint group = k / span;
    uint pos = k % span;
    uint top = group * 2u * span + pos;
    uint bot = top + span;

    float angle = (inverse ? 1.0f : -1.0f) * PI_F * (float)pos / (float)span;
    float c;
    float s = sincos(angle, &c);
    float2 w = (float2)(c, s);

    float2 a = data[top];
    float2 b = data[bot];
    float2 wb = (float2)(w.x * b.x - w.y * b.y, w.x * b.y + w.y * b.x);
    data[top] = a + wb;
    data[bot] = a - wb;
}
