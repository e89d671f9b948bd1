/* K-means after Rodinia's OpenCL version: the points arrive point-major and a first kernel
 * swaps them to feature-major (feature f of point p at features[f * npoints + p]) so that the
 * assignment kernel's reads are coalesced; the host updates the centres between launches. */

__kernel void kmeans_swap(__global const float *points, __global float *features,
                          int npoints, int nfeatures)
{
    int p = get_global_id(0);
    if (p >= npoints)
        return;
    for (int f = 0; f < nfeatures; f++)
        features[f * npoints + p] = points[p * nfeatures + f];
}

__kernel void kmeans_assign(__global const float *features, __global const float *clusters,
                            __global int *membership, int npoints, int nclusters,
                            int nfeatures)
{
    int p = get_global_id(0);
    if (p >= npoints)
        return;
    int best = 0;
    float best_dist = FLT_MAX;
    for (int c = 0; c < nclusters; c++) {
        float dist = 0.0f;
        for (int f = 0; f < nfeatures; f++) {
            float d = features[f * npoints + p] - clusters[c * nfeatures + f];
            dist += d * d;
        }
        if (dist < best_dist) {
            best_dist = dist;
            best = c;
        }
    }
    membership[p] = best;
}
