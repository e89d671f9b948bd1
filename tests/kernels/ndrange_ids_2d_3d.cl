// Records the work-item indexing functions for 2-D and 3-D NDRanges,
// including global offsets, number of groups and the work dimension.

__kernel void ids_2d(__global int4 *out)
{
    size_t gx = get_global_id(0);
    size_t gy = get_global_id(1);
    size_t w = get_global_size(0);
    size_t linear = (gy - get_global_offset(1)) * w + (gx - get_global_offset(0));
    out[linear] = (int4)((int)get_group_id(0), (int)get_group_id(1),
                         (int)get_num_groups(0) * (int)get_num_groups(1),
                         (int)get_work_dim());
}

__kernel void ids_3d(__global uint *flat, __global uint4 *local_ids)
{
    uint x = get_global_id(0) - get_global_offset(0);
    uint y = get_global_id(1) - get_global_offset(1);
    uint z = get_global_id(2) - get_global_offset(2);
    uint nx = get_global_size(0);
    uint ny = get_global_size(1);
    uint idx = (z * ny + y) * nx + x;

    uint groups = get_num_groups(0) * get_num_groups(1) * get_num_groups(2);
    flat[idx] = groups;
    local_ids[idx] = (uint4)(get_local_id(0), get_local_id(1), get_local_id(2),
                             get_local_size(0) * get_local_size(1) * get_local_size(2));
}
