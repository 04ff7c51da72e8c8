/* filter2d, float32, zero ghost cells, same-size output, planar channels on the NDRange's third
 * dimension, mask (up to 10 x 10, odd or even) in __constant memory (seed 001: PMPP's tiled 2-D
 * convolution).  Correlation (no flip); the mask's anchor is (AH, AW) = (kh/2, kw/2) as in PMPP
 * (row_i = row_o - kernel_width/2); ghost cells are zeros that still go through the
 * multiply-add, taps row-major, one float32 accumulator starting at 0, no fma contraction.
 */
#pragma OPENCL FP_CONTRACT OFF

__kernel void basic(__global const float * restrict in, __constant float * restrict M,
                    __global float * restrict out, const int H, const int W,
                    const int KH, const int KW, const int AH, const int AW)
{
    const int col = get_global_id(0), row = get_global_id(1), ch = get_global_id(2);
    if (row >= H || col >= W)
        return;
    __global const float *plane = in + (size_t)ch * H * W;
    float val = 0.0f;
    for (int i = 0; i < KH; ++i) {
        const int r = row - AH + i;
        for (int j = 0; j < KW; ++j) {
            const int c = col - AW + j;
            const float v = (r >= 0 && r < H && c >= 0 && c < W) ? plane[r * W + c] : 0.0f;
            val += v * M[i * KW + j];
        }
    }
    out[(size_t)ch * H * W + row * W + col] = val;
}

/* Work-group = input tile (O_TILE + KW - 1) x (O_TILE + KH - 1): every work-item loads one input
 * element (a ghost cell reads as 0) into __local memory, then the O_TILE x O_TILE items of the
 * top-left corner compute and write one output each. */
__kernel void tiled_halo(__global const float * restrict in, __constant float * restrict M,
                         __global float * restrict out, const int H, const int W,
                         const int KH, const int KW, const int AH, const int AW,
                         const int O_TILE, __local float * in_tile)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int TW = get_local_size(0);
    const int ch = get_global_id(2);
    const int row_o = get_group_id(1) * O_TILE + ty;
    const int col_o = get_group_id(0) * O_TILE + tx;
    const int row_i = row_o - AH, col_i = col_o - AW;
    __global const float *plane = in + (size_t)ch * H * W;

    in_tile[ty * TW + tx] = (row_i >= 0 && row_i < H && col_i >= 0 && col_i < W)
                            ? plane[row_i * W + col_i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);

    if (ty < O_TILE && tx < O_TILE && row_o < H && col_o < W) {
        float val = 0.0f;
        for (int i = 0; i < KH; ++i)
            for (int j = 0; j < KW; ++j)
                val += in_tile[(ty + i) * TW + (tx + j)] * M[i * KW + j];
        out[(size_t)ch * H * W + row_o * W + col_o] = val;
    }
}
