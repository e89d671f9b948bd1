// One compare-and-swap pass of a bitonic sorting network over uint keys.
// Host launches it for every (stage, pass) pair with n/2 work-items.

__kernel void bitonic_step(__global uint *keys,
                           const uint stage,
                           const uint pass_of_stage,
                           const uint ascending)
{
    uint tid = get_global_id(0);
    uint pair_distance = 1u << (stage - pass_of_stage);
    uint block_width = 2u * pair_distance;

    uint left = (tid % pair_distance) + (tid / pair_distance) * block_width;
    uint right = left + pair_distance;

    uint a = keys[left];
    uint b = keys[right];

    uint same_dir_block = 1u << stage;
    uint dir = ascending;
    if ((tid / same_dir_block) % 2u == 1u)
        dir = 1u - dir;

    uint lo = min(a, b);
    uint hi = max(a, b);
    keys[left] = dir ? lo : hi;
    keys[right] = dir ? hi : lo;
}
