// The CUDA corpus (cuda_kernels.py) in OpenCL C, for Oclgrind.  One kernel per bug; the
// "// BUG:" comments mark the lines a checker should name.
#define N1 64
#define RED 128
#define TILE 16

__kernel void neg_local_index(__global const float *a, __global float *out) {
    __local float s[N1];
    int t = get_local_id(0);
    s[t] = a[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[t] = s[t] - s[t - 1];  // BUG:neg_shared
}

__kernel void global_oob(__global const float *a, __global float *out) {
    int i = get_global_id(0);
    out[i] = a[i] * 2.0f;  // BUG:global_oob
}

__kernel void tile_missing_barrier(__global const float *a, __global float *out) {
    __local float tile[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int x = get_group_id(0) * TILE + tx, y = get_group_id(1) * TILE + ty;
    int w = get_num_groups(0) * TILE, h = get_num_groups(1) * TILE;
    tile[ty][tx] = a[y * w + x];  // BUG:tile_write
    int ox = get_group_id(1) * TILE + tx, oy = get_group_id(0) * TILE + ty;
    out[oy * h + ox] = tile[tx][ty];  // BUG:tile_read
}

__kernel void warp_reduce_no_barrier(__global const float *a, __global float *out) {
    __local float s[RED];
    int t = get_local_id(0);
    s[t] = a[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < 64) s[t] += s[t + 64];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < 32) {
        s[t] += s[t + 32];
        s[t] += s[t + 16];  // BUG:warp_race
        s[t] += s[t + 8];
        s[t] += s[t + 4];
        s[t] += s[t + 2];
        s[t] += s[t + 1];
    }
    if (t == 0) out[get_group_id(0)] = s[0];
}

__kernel void early_return_sum(__global const float *a, __global float *out, int n) {
    __local float s[RED];
    int t = get_local_id(0);
    int i = get_global_id(0);
    if (i >= n) return;
    s[t] = a[i];
    barrier(CLK_LOCAL_MEM_FENCE);  // BUG:early_return
    for (int stride = RED / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) out[get_group_id(0)] = s[0];
}

__kernel void fused_partial_stage(__global const float *a, __global float *out, int n) {
    __local float s[N1 + 2];
    int t = get_local_id(0);
    int i = get_global_id(0);
    if (i >= n) return;
    s[t + 1] = a[i];
    if (t == 0) s[0] = i > 0 ? a[i - 1] : 0.0f;
    if (t == N1 - 1) s[N1 + 1] = i + 1 < n ? a[i + 1] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);  // BUG:fused_barrier
    out[i] = s[t] + s[t + 1] + s[t + 2];
}

__kernel void uninit_local(__global const float *a, __global float *out) {
    __local float s[N1];
    int t = get_local_id(0);
    if (t % 2 == 0) s[t] = a[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[t] = s[t];  // BUG:uninit
}

__kernel void clean_reduce(__global const float *a, __global float *out, int n) {
    __local float s[RED];
    int t = get_local_id(0);
    int i = get_global_id(0);
    s[t] = i < n ? a[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = RED / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) out[get_group_id(0)] = s[0];
}
