// Kernels carrying optimisation hints: reqd_work_group_size,
// work_group_size_hint and vec_type_hint, on a simple brightness scale.

__kernel __attribute__((vec_type_hint(float4)))
void brighten4(__global float4 *px, const float gain)
{
    size_t i = get_global_id(0);
    px[i] = clamp(px[i] * gain, 0.0f, 1.0f);
}

__kernel __attribute__((work_group_size_hint(64, 1, 1)))
void brighten(__global float *px, const float gain)
{
    size_t i = get_global_id(0);
    px[i] = fmin(px[i] * gain, 1.0f);
}

__kernel
__attribute__((reqd_work_group_size(8, 8, 1)))
__attribute__((vec_type_hint(int)))
void brighten_2d(__global float *px, const int pitch, const float gain)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    px[y * pitch + x] *= gain;
}

kernel __attribute__((reqd_work_group_size(4, 4, 4)))
void touch_3d(global int *vol)
{
    size_t n = get_global_size(0) * get_global_size(1);
    size_t idx = get_global_id(2) * n + get_global_id(1) * get_global_size(0)
                 + get_global_id(0);
    vol[idx] += 1;
}
