// Affine transform of 2-D points where the transform parameters arrive
// as a struct passed by value to the kernel.

typedef struct {
    float2 row0;
    float2 row1;
    float2 offset;
    int flags;
    int pad;
} Affine2D;

float2 apply_affine(Affine2D t, float2 p)
{
    float2 r = (float2)(dot(t.row0, p), dot(t.row1, p)) + t.offset;
    return (t.flags & 1) ? -r : r;
}

__kernel void transform_points(__global float2 *points, const Affine2D xf)
{
    size_t i = get_global_id(0);
    points[i] = apply_affine(xf, points[i]);
}
