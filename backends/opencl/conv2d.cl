/* conv2d, cuconv (seed 004): NCHW input, filters re-laid out on the host as [M][R][S][C] so the
 * C-long depth row of one tap is contiguous.  T = float or double.  Stride / padding / dilation
 * general; groups = 1.  Ghost (padding) cells contribute w*0 through the same multiply-add
 * (IEEE: an Inf weight on a ghost cell gives NaN, as the spec says); the listing skips them. */
#pragma OPENCL FP_CONTRACT OFF
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif

/* stage 1: for tap k = (fy, fx) (NDRange dim 2), image n and filter m (dim 1 = n*M + m) and
 * output pixel (dim 0): the C-long dot product of the input depth row and the filter's depth
 * row, into partial[n][k][m][pixel] ((R*S) x M x Ho x Wo per image).  DIRECT (1x1 filters):
 * written straight to the output, plus the bias. */
__kernel void scalar_prods(__global const T * restrict x, __global const T * restrict f,
                           __global T * restrict dst, __global const T * restrict bias,
                           const int C, const int H, const int W, const int M, const int R, const int S,
                           const int Ho, const int Wo, const int sh, const int sw,
                           const int ph, const int pw, const int dh, const int dw, const int has_bias)
{
    const int pix = get_global_id(0), nm = get_global_id(1), k = get_global_id(2);
    if (pix >= Ho * Wo)
        return;
    const int n = nm / M, m = nm % M, fy = k / S, fx = k % S;
    const int oy = pix / Wo, ox = pix % Wo;
    const int iy = oy * sh - ph + fy * dh, ix = ox * sw - pw + fx * dw;
    const int inside = (uint)iy < (uint)H && (uint)ix < (uint)W;
    __global const T *frow = f + ((size_t)(m * R + fy) * S + fx) * C;
    T sum = (T)0;
    for (int d = 0; d < C; ++d) {
        const T xv = inside ? x[(((size_t)n * C + d) * H + iy) * W + ix] : (T)0;
        sum += xv * frow[d];
    }
#ifdef DIRECT
    if (has_bias)
        sum += bias[m];
    dst[((size_t)n * M + m) * Ho * Wo + pix] = sum;
#else
    dst[(((size_t)n * R * S + k) * M + m) * Ho * Wo + pix] = sum;
#endif
}

/* stage 2: out[n][m][pixel] = sum over k of partial[n][k][m][pixel] (k in order), plus bias */
__kernel void sum_partials(__global const T * restrict partial, __global T * restrict out,
                           __global const T * restrict bias, const int M, const int K,
                           const int HoWo, const int has_bias)
{
    const int pix = get_global_id(0), nm = get_global_id(1);
    if (pix >= HoWo)
        return;
    const int n = nm / M, m = nm % M;
    T s = (T)0;
    for (int k = 0; k < K; ++k)
        s += partial[(((size_t)n * K + k) * M + m) * HoWo + pix];
    if (has_bias)
        s += bias[m];
    out[(size_t)nm * HoWo + pix] = s;
}

/* fused: a work-group handles filter m of image n (dim 1) for a run of output pixels (dim 0);
 * for each tap the C-long filter depth row is staged in __local memory by the whole group
 * (barrier), used, and the group waits (barrier) before the next tap overwrites it.  Items past
 * the last pixel stay for the barriers (the listing returns early: barrier divergence). */
__kernel void fused(__global const T * restrict x, __global const T * restrict f,
                    __global T * restrict out, __global const T * restrict bias,
                    const int C, const int H, const int W, const int M, const int R, const int S,
                    const int Ho, const int Wo, const int sh, const int sw,
                    const int ph, const int pw, const int dh, const int dw, const int has_bias,
                    __local T *sf)
{
    const int pix = get_global_id(0), nm = get_global_id(1);
    const int l = get_local_id(0), nl = get_local_size(0);
    const int n = nm / M, m = nm % M;
    const int valid = pix < Ho * Wo;
    const int oy = valid ? pix / Wo : 0, ox = valid ? pix % Wo : 0;
    T acc = (T)0;
    for (int fy = 0; fy < R; ++fy) {
        for (int fx = 0; fx < S; ++fx) {
            for (int d = l; d < C; d += nl)
                sf[d] = f[((size_t)(m * R + fy) * S + fx) * C + d];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (valid) {
                const int iy = oy * sh - ph + fy * dh, ix = ox * sw - pw + fx * dw;
                const int inside = (uint)iy < (uint)H && (uint)ix < (uint)W;
                for (int d = 0; d < C; ++d) {
                    const T xv = inside ? x[(((size_t)n * C + d) * H + iy) * W + ix] : (T)0;
                    acc += xv * sf[d];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    if (valid) {
        if (has_bias)
            acc += bias[m];
        out[(size_t)nm * Ho * Wo + pix] = acc;
    }
}
