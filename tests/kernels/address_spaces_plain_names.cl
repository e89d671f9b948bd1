// Uses every address-space qualifier without leading underscores
// (global, local, constant, private) plus the underscored forms side by
// side, in a weighted moving average.

constant float weights[4] = { 0.1f, 0.2f, 0.3f, 0.4f };

float weighted(private float *window, constant float *w)
{
    float acc = 0.0f;
    for (int k = 0; k < 4; k++)
        acc += window[k] * w[k];
    return acc;
}

kernel void moving_average(global const float *in,
                           global float *out,
                           local float *cache,
                           __constant float *bias)
{
    private int lid = get_local_id(0);
    __private int lsz = get_local_size(0);
    int gid = get_global_id(0);

    cache[lid] = in[gid];
    barrier(CLK_LOCAL_MEM_FENCE);

    private float window[4];
    for (int k = 0; k < 4; k++) {
        int j = lid - k;
        window[k] = cache[j >= 0 ? j : 0];
    }
    out[gid] = weighted(window, weights) + bias[0] + 0.0f * (float)lsz;
}
