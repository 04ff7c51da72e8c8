/* filter2d, 3x3 uint8, paper-faithful int accumulator: refconv's own fastest kernel (issue #24),
 * the OpenCL twin of filter2d/numba_cuda/best_R{R}.  Bit for bit the spec:
 *   acc = 0; per tap (kernel row outer, column inner) acc = (int)((float)acc + w*(float)x)
 *   (float32, product and sum rounded to nearest, no contraction; the conversion truncates,
 *   saturating to int32, NaN -> 0); then acc >> shift; then wrap (SAT=0) or saturate (SAT=1) to uchar.
 * Only the interior is written.
 *
 * A work-item computes 16 consecutive output columns of ROWS output rows, streaming the input rows
 * top to bottom and keeping three rows of 18 converted pixels in registers (no private byte arrays:
 * the 16 bytes of a row and of a chunk of outputs are four uints).  VEC=1 (W % 16 == 0):
 * a row's 16 pixels are one aligned 16-byte load (uint4 viewed as uchar16), a chunk of 16 interior
 * outputs one 16-byte store; the halo pixels and the border chunks are bytes.  VEC=0: bytes.
 *
 * PATH (chosen on the host from the weights, see filter2d_best.py):
 *   0  the conversions as written (convert rn int->float, truncating float->int);
 *   1  every partial sum |s| < 2^22: the accumulator stays a float and (float)(int)s is
 *      trunc(s) on odd taps and copysign(rz(|s| + 2^23) - 2^23, s) on even ones (trunc_small),
 *      a pixel is as_float(0x4B000000 | x) - 2^23;
 *   2  as 1, and every product and partial sum is exact: one fma a tap.
 * rz(a + b), an add rounded toward zero, is PTX add.rz.f32 with -DUSE_PTX (NVIDIA), else the
 * rounded-to-nearest sum stepped toward zero when its TwoSum error says it rounded away.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef ROWS
#define ROWS 1
#endif
#ifndef PATH
#define PATH 0
#endif
#ifndef VEC
#define VEC 0
#endif
#ifndef SAT
#define SAT 0                                 /* 1: saturate to uchar, 0: wrap */
#endif

#define MAGIC 8388608.0f

inline int f2i_rz_sat(const float v)     /* CUDA cvt.rzi.s32.f32 */
{
    if (isnan(v))
        return 0;
    if (v >= 2147483648.0f)
        return INT_MAX;
    if (v < -2147483648.0f)
        return INT_MIN;
    return (int)v;
}

inline float fadd_rz(const float a, const float b)
{
#ifdef USE_PTX
    float r;
    asm("add.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    const float r = a + b;
    const float bb = r - a;
    const float e = (a - (r - bb)) + (b - bb);     /* TwoSum: (a + b) - r exactly */
    if (e != 0.0f && ((e < 0.0f) != (r < 0.0f)))
        return nextafter(r, 0.0f);
    return r;
#endif
}

inline float pix(const uint x)
{
#if PATH == 0
    return (float)x;
#else
    return as_float(0x4B000000u | x) - MAGIC;
#endif
}

/* (float)(int)s for |s| < 2^22, before tap t: odd taps through trunc() (cvt.rzi.f32.f32, the
 * conversion unit), even taps through the float pipe, so that the two units share the work;
 * -DTRUNC_ALL: trunc() on every tap (where no round-toward-zero add is at hand) */
inline float trunc_small(const float s, const int t)
{
#ifndef TRUNC_ALL
    if ((t & 1) == 0)
        return copysign(fadd_rz(fabs(s), MAGIC) - MAGIC, s);
#endif
    return trunc(s);
}

inline void load_row(__global const uchar *restrict img, const int rr, const int c0, const int W,
                     float *p)
{
    const __global uchar *row = img + (size_t)rr * W;
#if VEC
    const uint4 q = *(const __global uint4 *)(row + c0);
    const uint u[4] = {q.s0, q.s1, q.s2, q.s3};
    p[0] = pix(c0 > 0 ? row[c0 - 1] : 0);
#pragma unroll
    for (int i = 0; i < 16; ++i)
        p[i + 1] = pix((u[i / 4] >> (8 * (i % 4))) & 0xFFu);
    p[17] = pix(c0 + 16 < W ? row[c0 + 16] : 0);
#else
#pragma unroll
    for (int j = 0; j < 18; ++j) {
        const int c = c0 - 1 + j;
        p[j] = pix(c >= 0 && c < W ? row[c] : 0);
    }
#endif
}

inline int output(const float *w, const float *p0, const float *p1, const float *p2, const int i,
                  const int shift)
{
    const float x[9] = {p0[i], p0[i + 1], p0[i + 2], p1[i], p1[i + 1], p1[i + 2],
                        p2[i], p2[i + 1], p2[i + 2]};
#if PATH == 0
    int a = f2i_rz_sat(w[0] * x[0]);
#pragma unroll
    for (int t = 1; t < 9; ++t)
        a = f2i_rz_sat((float)a + w[t] * x[t]);
    return a >> shift;
#else
    float s = w[0] * x[0];
#pragma unroll
    for (int t = 1; t < 9; ++t) {
        const float a = trunc_small(s, t);
#if PATH == 2
        s = fma(w[t], x[t], a);
#else
        s = a + w[t] * x[t];
#endif
    }
    const int f = as_int(fadd_rz(fabs(s), MAGIC)) - 0x4B000000;
    return (s < 0.0f ? -f : f) >> shift;
#endif
}

__kernel void filter2d_best(__global const uchar *restrict img, __global const float *restrict wts,
                            __global uchar *restrict out, const int H, const int W, const int shift)
{
    const int c0 = (int)get_global_id(0) * 16;
    const int r0 = 1 + (int)get_global_id(1) * ROWS;
    if (c0 >= W - 1 || r0 > H - 2)
        return;
    float w[9];
#pragma unroll
    for (int t = 0; t < 9; ++t)
        w[t] = wts[t];
    float p0[18], p1[18], p2[18];
    load_row(img, r0 - 1, c0, W, p0);
    load_row(img, r0, c0, W, p1);
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
        const int r = r0 + k;
        if (r > H - 2)
            return;
        load_row(img, r + 1, c0, W, p2);
        uint o[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int v = output(w, p0, p1, p2, i, shift);
#if SAT
            o[i / 4] |= (uint)clamp(v, 0, 255) << (8 * (i % 4));
#else
            o[i / 4] |= ((uint)v & 0xFFu) << (8 * (i % 4));
#endif
        }
        __global uchar *orow = out + (size_t)r * W;
#if VEC
        if (c0 >= 1 && c0 + 15 <= W - 2) {
            *(__global uint4 *)(orow + c0) = (uint4)(o[0], o[1], o[2], o[3]);
        } else
#endif
        {
#pragma unroll
            for (int i = 0; i < 16; ++i)
                if (c0 + i >= 1 && c0 + i <= W - 2)
                    orow[c0 + i] = (uchar)(o[i / 4] >> (8 * (i % 4)));
        }
#pragma unroll
        for (int j = 0; j < 18; ++j) {
            p0[j] = p1[j];
            p1[j] = p2[j];
        }
    }
}
