// Reflects rays off planes using 3-component vectors loaded from packed
// float arrays with vload3 and written back with vstore3.

float3 reflect3(float3 d, float3 n)
{
    return d - 2.0f * dot(d, n) * n;
}

__kernel void reflect_rays(__global const float *dirs,
                           __global const float *normals,
                           __global float *out,
                           __global int3 *octant)
{
    size_t i = get_global_id(0);
    float3 d = vload3(i, dirs);
    float3 n = normalize(vload3(i, normals));
    float3 r = reflect3(d, n);
    vstore3(r, i, out);
    octant[i] = (int3)(r.x < 0.0f, r.y < 0.0f, r.z < 0.0f);
}
