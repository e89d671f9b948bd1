// Gathers one column of interleaved records (stride = fields) into local
// memory with async_work_group_strided_copy, normalises it, and scatters
// it back with the same stride. Two events are waited on together.

__kernel void normalize_field(__global float *records,
                              __global const float *offsets,
                              __local float *column,
                              __local float *offs,
                              const uint fields,
                              const uint field)
{
    size_t lsz = get_local_size(0);
    size_t lid = get_local_id(0);
    size_t first = get_group_id(0) * lsz * fields + field;

    event_t evs[2];
    evs[0] = async_work_group_strided_copy(column, records + first, lsz, fields, 0);
    evs[1] = async_work_group_copy(offs, offsets + get_group_id(0) * lsz, lsz, 0);
    wait_group_events(2, evs);

    column[lid] = column[lid] - offs[lid];
    barrier(CLK_LOCAL_MEM_FENCE);

    event_t done = async_work_group_strided_copy(records + first, column, lsz, fields, 0);
    wait_group_events(1, &done);
}
