// Piecewise-linear colour map: breakpoints are program-scope __constant
// structs with initializers, searched by a helper function.

typedef struct {
    float position;
    float3 color;
} ColorStop;

__constant ColorStop palette[5] = {
    { 0.00f, (float3)(0.0f, 0.0f, 0.5f) },
    { 0.25f, (float3)(0.0f, 0.5f, 1.0f) },
    { 0.50f, (float3)(0.5f, 1.0f, 0.5f) },
    { 0.75f, (float3)(1.0f, 0.5f, 0.0f) },
    { 1.00f, (float3)(0.5f, 0.0f, 0.0f) }
};

__constant int palette_size = 5;
__constant char palette_name[] = "jetlike";

float3 lookup(float t)
{
    t = clamp(t, 0.0f, 1.0f);
    for (int k = 1; k < palette_size; k++) {
        if (t <= palette[k].position) {
            float span = palette[k].position - palette[k - 1].position;
            float u = (t - palette[k - 1].position) / span;
            return mix(palette[k - 1].color, palette[k].color, u);
        }
    }
    return palette[palette_size - 1].color;
}

__kernel void apply_colormap(__global const float *values,
                             __global uchar4 *rgba)
{
    size_t i = get_global_id(0);
    float3 c = lookup(values[i]);
    uchar alpha = (uchar)(palette_name[0] == 'j' ? 255 : 128);
    rgba[i] = (uchar4)(convert_uchar3_sat(c * 255.0f), alpha);
}
