// Stream compaction: each work-item scans a strided chunk, skips
// rejected elements with continue, and appends survivors to the output
// through a global atomic cursor. Selection mode comes from an enum.

typedef enum { KEEP_POSITIVE = 0, KEEP_FINITE = 1, KEEP_ALL = 2 } KeepMode;

__kernel void compact(__global const float * restrict in,
                      __global float * restrict out,
                      volatile __global int *cursor,
                      const int n,
                      const int mode)
{
    int stride = get_global_size(0);
    for (int i = get_global_id(0); i < n; i += stride) {
        float v = in[i];
        switch ((KeepMode)mode) {
        case KEEP_POSITIVE:
            if (!(v > 0.0f))
                continue;
            break;
        case KEEP_FINITE:
            if (!isfinite(v))
                continue;
            break;
        default:
            break;
        }
        int slot = atomic_inc(cursor);
        out[slot] = v;
    }
}
