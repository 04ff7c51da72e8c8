/* conv2d, cuconv (seed 004): NCHW input, filters re-laid out on the host as [M][R][S][C] so the
 * C-long depth row of one tap is contiguous.  T = float or double.  Stride / padding / dilation
 * general; groups = 1.  Ghost (padding) cells contribute w*0 through the same multiply-add
 * (IEEE: an Inf weight on a ghost cell gives NaN, as the spec says); the listing skips them.
 *
 * The int scalars come in one __constant buffer `prm` (NVIDIA's OpenCL charges a launch with more
 * than two scalar arguments microseconds more).  The inside-the-image test is taken once a tap,
 * not per channel, and the depth loops (DEPTH_DOT) issue eight loads before their eight
 * multiply-adds; the sum of partials is unrolled 8 deep.  The sums keep their order
 * (d = 0 .. C-1, k = 0 .. K-1). */
/* A channel's multiply and add may contract to one FMA: the study's CUDA source does under nvcc's
 * default (-fmad=true), the Numba twin does under NVVM's, and the spec's bound accepts either. */
#pragma OPENCL FP_CONTRACT ON
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif

/* acc += x[d*step] * w[d] for d = 0 .. n-1, in that order, eight loads of x issued before their
 * eight multiply-adds (the Numba twin's loop, written the same way).  UNROLL: a pragma for the
 * 8-channel loop, or nothing.  fused passes _Pragma("unroll 1"): with C known at build time
 * (CDEPTH) NVIDIA's OpenCL otherwise unrolls the loop further, and the fused kernel ran 1.1-1.25x
 * slower on 7 of the 10 cuconv presets; scalar_prods (C a run-time value) runs faster as the
 * compiler chooses. */
#define DEPTH_DOT(acc, xp0, step, w, n, UNROLL)                                         \
    {                                                                                   \
        __global const T *xp_ = (xp0);                                                  \
        const size_t st_ = (step);                                                      \
        int d_ = 0;                                                                     \
        UNROLL                                                                          \
        for (; d_ + 8 <= (n); d_ += 8) {                                                \
            const T x0 = xp_[0], x1 = xp_[st_], x2 = xp_[2 * st_], x3 = xp_[3 * st_];   \
            const T x4 = xp_[4 * st_], x5 = xp_[5 * st_], x6 = xp_[6 * st_], x7 = xp_[7 * st_]; \
            acc += x0 * w[d_];                                                          \
            acc += x1 * w[d_ + 1];                                                      \
            acc += x2 * w[d_ + 2];                                                      \
            acc += x3 * w[d_ + 3];                                                      \
            acc += x4 * w[d_ + 4];                                                      \
            acc += x5 * w[d_ + 5];                                                      \
            acc += x6 * w[d_ + 6];                                                      \
            acc += x7 * w[d_ + 7];                                                      \
            xp_ += 8 * st_;                                                             \
        }                                                                               \
        for (; d_ < (n); ++d_) {                                                        \
            acc += *xp_ * w[d_];                                                        \
            xp_ += st_;                                                                 \
        }                                                                               \
    }

/* prm of scalar_prods and fused: C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw, has_bias */
#define GEOMETRY                                                                        \
    const int C = prm[0], H = prm[1], W = prm[2], M = prm[3], R = prm[4], S = prm[5];   \
    const int Ho = prm[6], Wo = prm[7], sh = prm[8], sw = prm[9], ph = prm[10];          \
    const int pw = prm[11], dh = prm[12], dw = prm[13], has_bias = prm[14];

/* stage 1: for tap k = (fy, fx) (NDRange dim 2), image n and filter m (dim 1 = n*M + m) and
 * output pixel (dim 0): the C-long dot product of the input depth row and the filter's depth
 * row, into partial[n][k][m][pixel] ((R*S) x M x Ho x Wo per image).  DIRECT (1x1 filters):
 * written straight to the output, plus the bias. */
__kernel void scalar_prods(__global const T * restrict x, __global const T * restrict f,
                           __global T * restrict dst, __global const T * restrict bias,
                           __constant const int * restrict prm)
{
    GEOMETRY
    const int pix = get_global_id(0), nm = get_global_id(1), k = get_global_id(2);
    if (pix >= Ho * Wo)
        return;
    const int n = nm / M, m = nm % M, fy = k / S, fx = k % S;
    const int oy = pix / Wo, ox = pix % Wo;
    const int iy = oy * sh - ph + fy * dh, ix = ox * sw - pw + fx * dw;
    const bool inside = (uint)iy < (uint)H && (uint)ix < (uint)W;
    __global const T *frow = f + ((size_t)(m * R + fy) * S + fx) * C;
    T sum = (T)0;
    if (inside) {
        DEPTH_DOT(sum, x + ((size_t)n * C * H + iy) * W + ix, (size_t)H * W, frow, C, );
    } else {
        for (int d = 0; d < C; ++d)            /* ghost cells: w*0, as the spec */
            sum += (T)0 * frow[d];
    }
#ifdef DIRECT
    if (has_bias)
        sum += bias[m];
    dst[((size_t)n * M + m) * Ho * Wo + pix] = sum;
#else
    dst[(((size_t)n * R * S + k) * M + m) * Ho * Wo + pix] = sum;
#endif
}

/* stage 2: out[n][m][pixel] = sum over k of partial[n][k][m][pixel] (k in order), plus bias;
 * prm: M, K, HoWo, has_bias */
__kernel void sum_partials(__global const T * restrict partial, __global T * restrict out,
                           __global const T * restrict bias, __constant const int * restrict prm)
{
    const int M = prm[0], K = prm[1], HoWo = prm[2], has_bias = prm[3];
    const int pix = get_global_id(0), nm = get_global_id(1);
    if (pix >= HoWo)
        return;
    const int n = nm / M, m = nm % M;
    __global const T *pp = partial + ((size_t)n * K * M + m) * HoWo + pix;
    const size_t step = (size_t)M * HoWo;
    T s = (T)0;
#pragma unroll 8                   /* K is R*S: 9 for 3x3 filters, one unrolled pass and one more */
    for (int k = 0; k < K; ++k) {
        s += *pp;
        pp += step;
    }
    if (has_bias)
        s += bias[m];
    out[(size_t)nm * HoWo + pix] = s;
}

/* fused: a work-group handles filter m of image n (dim 1) for a run of output pixels (dim 0);
 * for each tap the C-long filter depth row is staged in __local memory by the whole group
 * (barrier), used, and the group waits (barrier) before the next tap overwrites it.  Items past
 * the last pixel stay for the barriers (the listing returns early: barrier divergence).
 * CDEPTH: C at compile time (the Numba twin compiles its kernel per C too), else prm's C. */
__kernel void fused(__global const T * restrict x, __global const T * restrict f,
                    __global T * restrict out, __global const T * restrict bias,
                    __constant const int * restrict prm, __local T *sf)
{
    GEOMETRY
#ifdef CDEPTH
#define CD CDEPTH
#else
#define CD C
#endif
    const int pix = get_global_id(0), nm = get_global_id(1);
    const int l = get_local_id(0), nl = get_local_size(0);
    const int n = nm / M, m = nm % M;
    const bool valid = pix < Ho * Wo;
    const int oy = valid ? pix / Wo : 0, ox = valid ? pix % Wo : 0;
    const size_t HW = (size_t)H * W;
    __global const T *xn = x + (size_t)n * CD * HW;
    __global const T *frow = f + (size_t)m * R * S * CD;       /* depth row (m, 0, 0) */
    T acc = (T)0;
    for (int fy = 0; fy < R; ++fy) {
        for (int fx = 0; fx < S; ++fx) {
            for (int d = l; d < CD; d += nl)
                sf[d] = frow[d];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (valid) {
                const int iy = oy * sh - ph + fy * dh, ix = ox * sw - pw + fx * dw;
                if ((uint)iy < (uint)H && (uint)ix < (uint)W) {
                    DEPTH_DOT(acc, xn + (size_t)iy * W + ix, HW, sf, CD, _Pragma("unroll 1"));
                } else {
                    for (int d = 0; d < CD; ++d)   /* ghost cells: w*0, as the spec */
                        acc += (T)0 * sf[d];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            frow += CD;
        }
    }
    if (valid) {
        if (has_bias)
            acc += bias[m];
        out[(size_t)nm * Ho * Wo + pix] = acc;
    }
}
