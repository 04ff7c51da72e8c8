/* Shared by filter2d_best.cl and sobel_best.cl (prepended by their modules, which then reset the
 * line numbering with #line so that build logs quote each kernel file's own lines).
 * pack4: the low bytes of a, b, c, d packed into one word (a lowest); three byte permutes (PTX
 * prmt) with -DUSE_PTX, the portable uchar4 otherwise. */
inline uint pack4(const uint a, const uint b, const uint c, const uint d)
{
#ifdef USE_PTX
    uint ab, cd, r;
    asm("prmt.b32 %0, %1, %2, 0x0040;" : "=r"(ab) : "r"(a), "r"(b));
    asm("prmt.b32 %0, %1, %2, 0x0040;" : "=r"(cd) : "r"(c), "r"(d));
    asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(r) : "r"(ab), "r"(cd));
    return r;
#else
    return as_uint((uchar4)((uchar)a, (uchar)b, (uchar)c, (uchar)d));
#endif
}

#line 1 "sobel_best.cl"
/* Sobel gradient magnitude, uint8 gray or RGB/RGBA (CH = 0, 3, 4): refconv's own fastest kernel
 * (issue #24), the OpenCL twin of sobel/numba_cuda/best_R{R}.  Bit for bit the spec: gray
 * (0.299f*R + 0.587f*G) + 0.114f*B in float32 (no contraction), Gx = -p00 + p02 - 2*p10 + 2*p12
 * - p20 + p22 and Gy = -p00 + p20 - 2*p01 + 2*p21 - p02 + p22 accumulated in that order (the
 * products by +-2 are exact, so fma(+-2, p, acc) rounds exactly as product-then-sum), |Gx|+|Gy|
 * or sqrt(Gx*Gx+Gy*Gy), truncated and saturated to uchar; only the interior is written.
 *
 * A work-item computes COLS = 8 consecutive output columns of ROWS output rows, streaming input
 * rows top to bottom with three rows of 10 gray values in registers; the next input row's raw
 * loads (row r+2, clamped to H-1) are issued right after row r+1 is converted, before row r's
 * arithmetic and stores, so that they overlap them.  VEC=1 (CH == 4, W % 8 == 0): a row's 8 pixels
 * (32 bytes) are two aligned 16-byte loads (uint4), the two halo pixels 4-byte loads, and the 8
 * outputs one 8-byte store (uint2) where the whole chunk is interior (`full`, tested once before
 * the row loop), else bytes each guarded by its column.  VEC=0: bytes, the next row loaded and
 * converted at the top of each row.  The row loop is unrolled by three with the register rows
 * renamed (sobel_row), so that no row of registers is copied.
 *
 * A channel byte x becomes X = as_float(0x4B000000 | x) = 2^23 + x (one byte permute, PTX prmt,
 * with -DUSE_PTX), and its gray product one fma on it: fma(C, X, -C*2^23) = rn(C*x).  The
 * output: with -DUSE_PTX, min(m, 255) added to 2^23 rounding toward zero (PTX add.rz.f32) is
 * 2^23 + trunc(min(m, 255)), whose low byte is the output (m >= 0); the portable build takes
 * convert_uchar_sat_rtz(m), the same byte.
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
#define COLS 8
#define MAGIC 8388608.0f

/* as_float(0x4B000000 | byte b of u) = 2^23 + that byte */
inline float magic_byte(const uint u, const uint b)
{
#ifdef USE_PTX
    uint r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(u), "r"(0x4B000000u), "r"(0x7540u | b));
    return as_float(r);
#else
    return as_float(0x4B000000u | ((u >> (8u * b)) & 0xFFu));
#endif
}

/* rn(c * x) from X = 2^23 + x, as fma(c, X, -c * 2^23): the exact value is c * x (c * 2^23 is
 * exact), rounded once; one fma instead of a subtract and a multiply */
inline float prod(const float c, const float X)
{
    return fma(c, X, -c * MAGIC);
}

inline float gray_word(const uint u)     /* RGBA pixel, R in the low byte */
{
    return (prod(0.299f, magic_byte(u, 0)) + prod(0.587f, magic_byte(u, 1))) + prod(0.114f, magic_byte(u, 2));
}

inline float gray_bytes(__global const uchar *img, const int rr, const int c, const int W)
{
    if (c < 0 || c >= W)
        return 0.0f;
    const size_t i = (size_t)rr * W + c;
#if CH == 0
    return as_float(0x4B000000u | img[i]) - MAGIC;
#else
    const __global uchar *q = img + i * CH;
    return (prod(0.299f, as_float(0x4B000000u | q[0])) + prod(0.587f, as_float(0x4B000000u | q[1])))
           + prod(0.114f, as_float(0x4B000000u | q[2]));
#endif
}

/* VEC: an input row's raw words for one work-item: its 8 pixels and the two halo pixels */
typedef struct {
    uint4 a, b;
    uint m, p;
} raw_row;

inline raw_row load_raw(__global const uchar *restrict img, const int rr, const int c0, const int W)
{
    const __global uint *row = (const __global uint *)img + (size_t)rr * W;
    raw_row q;
    q.a = *(const __global uint4 *)(row + c0);
    q.b = *(const __global uint4 *)(row + c0 + 4);
    q.m = c0 > 0 ? row[c0 - 1] : 0u;
    q.p = c0 + COLS < W ? row[c0 + COLS] : 0u;
    return q;
}

/* the raw row converted to gray: p[0 .. 9] are columns c0-1 .. c0+8 (a zero halo word is gray 0) */
inline void gray_raw(const raw_row q, float *p)
{
    p[0] = gray_word(q.m);
    p[1] = gray_word(q.a.s0);
    p[2] = gray_word(q.a.s1);
    p[3] = gray_word(q.a.s2);
    p[4] = gray_word(q.a.s3);
    p[5] = gray_word(q.b.s0);
    p[6] = gray_word(q.b.s1);
    p[7] = gray_word(q.b.s2);
    p[8] = gray_word(q.b.s3);
    p[9] = gray_word(q.p);
}

inline void load_row(__global const uchar *restrict img, const int rr, const int c0, const int W, float *p)
{
#pragma unroll
    for (int j = 0; j < COLS + 2; ++j)
        p[j] = gray_bytes(img, rr, c0 - 1 + j, W);
}

/* output column c0+i's byte, in the low byte of the result (the higher bytes are not zero) */
inline uint result(const float *p0, const float *p1, const float *p2, const int i)
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
#ifdef USE_PTX
    /* trunc + saturate of m >= 0: rz(min(m, 255) + 2^23) = 2^23 + trunc(min(m, 255)), its low byte */
    float v;
    asm("add.rz.f32 %0, %1, %2;" : "=f"(v) : "f"(fmin(m, 255.0f)), "f"(MAGIC));
    return as_uint(v);
#else
    return convert_uchar_sat_rtz(m);
#endif
}

/* pack4 (the low bytes of four words in one): pack4.cl, prepended by the module */

#if VEC
#define RAW_ARG , raw_row *q
#define RAW_PASS , &q
#else
#define RAW_ARG
#define RAW_PASS
#endif

/* output row r from the register rows top, mid and bot; bot (input row r+1) is filled here, and in
 * the VEC layout the raw words of input row r+2 are loaded into *q before this row's arithmetic */
inline void sobel_row(__global const uchar *restrict img, __global uchar *restrict out, const int r,
                      const int c0, const int H, const int W, const bool full,
                      const float *top, const float *mid, float *bot RAW_ARG)
{
#if VEC
    gray_raw(*q, bot);
    *q = load_raw(img, min(r + 2, H - 1), c0, W);   /* the next row's loads, before this row's work */
#else
    load_row(img, r + 1, c0, W, bot);
#endif
    uint o[COLS];
#pragma unroll
    for (int i = 0; i < COLS; ++i)
        o[i] = result(top, mid, bot, i);
    __global uchar *orow = out + (size_t)r * W;
#if VEC
    if (full) {
        *(__global uint2 *)(orow + c0) = (uint2)(pack4(o[0], o[1], o[2], o[3]), pack4(o[4], o[5], o[6], o[7]));
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < COLS; ++i)
        if (c0 + i >= 1 && c0 + i <= W - 2)
            orow[c0 + i] = (uchar)o[i];
}

__kernel void sobel_best(__global const uchar *restrict img, __global uchar *restrict out,
                         const int H, const int W)
{
    const int c0 = (int)get_global_id(0) * COLS;
    const int r0 = 1 + (int)get_global_id(1) * ROWS;
    if (c0 >= W - 1 || r0 > H - 2)
        return;
    float p0[COLS + 2], p1[COLS + 2], p2[COLS + 2];
#if VEC
    const bool full = c0 >= 1 && c0 + COLS - 1 <= W - 2;
    raw_row q = load_raw(img, r0 - 1, c0, W);
    gray_raw(q, p0);
    q = load_raw(img, r0, c0, W);
    gray_raw(q, p1);
    q = load_raw(img, r0 + 1, c0, W);
#else
    const bool full = false;
    load_row(img, r0 - 1, c0, W, p0);
    load_row(img, r0, c0, W, p1);
#endif
    /* the row loop unrolled by three, as the Numba twin's: the register rows take turns as the
     * bottom row (p2, p0, p1), so that after three rows they are back in place and none is copied */
#pragma unroll 1
    for (int k = 0; k < ROWS; k += 3) {
        if (r0 + k > H - 2)
            return;
        sobel_row(img, out, r0 + k, c0, H, W, full, p0, p1, p2 RAW_PASS);
        if (k + 1 >= ROWS || r0 + k + 1 > H - 2)
            return;
        sobel_row(img, out, r0 + k + 1, c0, H, W, full, p1, p2, p0 RAW_PASS);
        if (k + 2 >= ROWS || r0 + k + 2 > H - 2)
            return;
        sobel_row(img, out, r0 + k + 2, c0, H, W, full, p2, p0, p1 RAW_PASS);
    }
}
