// EXPECT: 11:23: called object type float is not a function
// A struct field that is a plain float cannot be called like a function.
typedef struct {
    float gain;
    float offset;
} Params;

__kernel void apply(__global float *data, const Params prm)
{
    size_t i = get_global_id(0);
    data[i] = prm.gain(data[i]) + prm.offset;
}
