/* Sobel gradient magnitude, uint8 gray or RGB/RGBA (CH = 0, 3, 4): refconv's own fastest kernel
 * (issue #24), the OpenCL twin of sobel/numba_cuda/best_R{R}.  Bit for bit the spec: gray
 * (0.299f*R + 0.587f*G) + 0.114f*B in float32 (no contraction), Gx = -p00 + p02 - 2*p10 + 2*p12
 * - p20 + p22 and Gy = -p00 + p20 - 2*p01 + 2*p21 - p02 + p22 accumulated in that order (the
 * products by +-2 are exact, so fma(+-2, p, acc) rounds exactly as product-then-sum), |Gx|+|Gy|
 * or sqrt(Gx*Gx+Gy*Gy), truncated and saturated to uchar; only the interior is written.
 *
 * A work-item computes 4 consecutive output columns of ROWS output rows, streaming input rows top
 * to bottom with three rows of 6 gray values in registers.  VEC=1 (CH == 4, W % 4 == 0): a row's
 * 4 pixels are one aligned 16-byte load (the two halo pixels 4-byte loads), the 4 outputs one
 * 4-byte store.  VEC=0: bytes.  A byte becomes a float as as_float(0x4B000000 | x) - 2^23 (exact).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef ROWS
#define ROWS 1
#endif
#ifndef CH
#define CH 4
#endif
#ifndef VEC
#define VEC 0
#endif
#ifndef L2
#define L2 0
#endif

inline float cv(const uint x)
{
    return as_float(0x4B000000u | x) - 8388608.0f;
}

/* rn(c * x) for a byte x, as fma(c, X, -c * 2^23) with X = as_float(0x4B000000 | x) = 2^23 + x: the
 * exact value is c * x (c * 2^23 is exact), rounded once; one fma instead of a subtract and a multiply */
#ifndef GRAY_FMA
#define GRAY_FMA 1
#endif
inline float prod(const float c, const uint x)
{
#if GRAY_FMA
    return fma(c, as_float(0x4B000000u | x), -c * 8388608.0f);
#else                                      /* -DGRAY_FMA=0: the subtract and the multiply */
    return c * cv(x);
#endif
}

inline float gray_word(const uint u)     /* RGBA pixel, R in the low byte */
{
    return (prod(0.299f, u & 0xFFu) + prod(0.587f, (u >> 8) & 0xFFu)) + prod(0.114f, (u >> 16) & 0xFFu);
}

inline float gray_bytes(__global const uchar *img, const int rr, const int c, const int W)
{
    if (c < 0 || c >= W)
        return 0.0f;
    const size_t i = (size_t)rr * W + c;
#if CH == 0
    return cv(img[i]);
#else
    const __global uchar *q = img + i * CH;
    return (prod(0.299f, q[0]) + prod(0.587f, q[1])) + prod(0.114f, q[2]);
#endif
}

inline void load_row(__global const uchar *restrict img, const int rr, const int c0, const int W, float *p)
{
#if VEC
    const __global uint *row = (const __global uint *)img + (size_t)rr * W;
    const uint4 q = *(const __global uint4 *)(row + c0);
    p[0] = c0 > 0 ? gray_word(row[c0 - 1]) : 0.0f;
    p[1] = gray_word(q.s0);
    p[2] = gray_word(q.s1);
    p[3] = gray_word(q.s2);
    p[4] = gray_word(q.s3);
    p[5] = c0 + 4 < W ? gray_word(row[c0 + 4]) : 0.0f;
#else
#pragma unroll
    for (int j = 0; j < 6; ++j)
        p[j] = gray_bytes(img, rr, c0 - 1 + j, W);
#endif
}

inline uchar result(const float *p0, const float *p1, const float *p2, const int i)
{
    float gx = -p0[i] + p0[i + 2];
    gx = fma(-2.0f, p1[i], gx);
    gx = fma(2.0f, p1[i + 2], gx);
    gx = gx - p2[i];
    gx = gx + p2[i + 2];
    float gy = -p0[i] + p2[i];
    gy = fma(-2.0f, p0[i + 1], gy);
    gy = fma(2.0f, p2[i + 1], gy);
    gy = gy - p0[i + 2];
    gy = gy + p2[i + 2];
#if L2
    const float m = sqrt(gx * gx + gy * gy);
#else
    const float m = fabs(gx) + fabs(gy);
#endif
    return convert_uchar_sat_rtz(m);
}

__kernel void sobel_best(__global const uchar *restrict img, __global uchar *restrict out,
                         const int H, const int W)
{
    const int c0 = (int)get_global_id(0) * 4;
    const int r0 = 1 + (int)get_global_id(1) * ROWS;
    if (c0 >= W - 1 || r0 > H - 2)
        return;
    float p0[6], p1[6], p2[6];
    load_row(img, r0 - 1, c0, W, p0);
    load_row(img, r0, c0, W, p1);
    for (int k = 0; k < ROWS; ++k) {
        const int r = r0 + k;
        if (r > H - 2)
            return;
        load_row(img, r + 1, c0, W, p2);
        uchar o[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            o[i] = result(p0, p1, p2, i);
        __global uchar *orow = out + (size_t)r * W;
#if VEC
        if (c0 >= 1 && c0 + 3 <= W - 2) {
            *(__global uchar4 *)(orow + c0) = vload4(0, o);
        } else
#endif
        {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (c0 + i >= 1 && c0 + i <= W - 2)
                    orow[c0 + i] = o[i];
        }
#pragma unroll
        for (int j = 0; j < 6; ++j) {
            p0[j] = p1[j];
            p1[j] = p2[j];
        }
    }
}
