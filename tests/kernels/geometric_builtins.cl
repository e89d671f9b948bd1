// Computes triangle normals, areas and centroid distances with the
// geometric builtins: cross, dot, length, distance, normalize and the
// fast_ variants.

__kernel void triangle_geometry(__global const float4 *v0,
                                __global const float4 *v1,
                                __global const float4 *v2,
                                __global float4 *normals,
                                __global float *areas,
                                __global float *dist_to_origin)
{
    size_t i = get_global_id(0);
    float4 a = v0[i];
    float4 b = v1[i];
    float4 c = v2[i];

    float4 n = cross(b - a, c - a);
    areas[i] = 0.5f * length(n);
    normals[i] = normalize(n);

    float3 centroid = (a.xyz + b.xyz + c.xyz) / 3.0f;
    float d = distance(centroid, (float3)(0.0f));
    float approx = fast_length(centroid);
    float3 dir = fast_normalize(centroid);
    dist_to_origin[i] = d + 0.0f * (approx - dot(dir, centroid));
}
