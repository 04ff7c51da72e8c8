/* filter2d, 3x3 uint8, paper-faithful int accumulator: refconv's own fastest kernel (issue #24),
 * the OpenCL twin of filter2d/numba_cuda/best_R{R}.  Bit for bit the spec:
 *   acc = 0; per tap (kernel row outer, column inner) acc = (int)((float)acc + w*(float)x)
 *   (float32, product and sum rounded to nearest, no contraction; the conversion truncates,
 *   saturating to int32, NaN -> 0); then acc >> shift; then wrap (SAT=0) or saturate (SAT=1) to uchar.
 * Only the interior is written.
 *
 * A work-item computes 16 consecutive output columns of ROWS output rows, streaming the input rows
 * top to bottom and keeping three rows of 18 converted pixels in registers; the next input row's raw
 * loads (row r+2, clamped to H-1 unless EXACT) are issued right after row r+1 is converted, before row r's
 * arithmetic and stores, so that they overlap them (the prologue loads raw row r0+1).  VEC=1
 * (W % 16 == 0): a row's 16 pixels are one aligned 16-byte load (uint4), the two halo pixels bytes;
 * where the whole chunk of 16 columns is interior (`full`, tested once before the row loop) its 16
 * outputs are one 16-byte store, else bytes each guarded by its column.  VEC=0: bytes.
 *
 * PATH (chosen on the host from the weights, see filter2d_best.py):
 *   0  the conversions as written (convert rn int->float, truncating float->int);
 *   1  every partial sum |s| < 2^22: the accumulator stays a float and (float)(int)s is
 *      trunc(s) on odd taps and copysign(rz(|s| + 2^23) - 2^23, s) on even ones (trunc_small),
 *      a pixel is as_float(0x4B000000 | x) - 2^23 (a word's byte b to 0x4B000000 | x in one byte
 *      permute, PTX prmt.b32 with 0x7540 | b, with -DUSE_PTX);
 *   2  as 1, and every product and partial sum is exact: one fma a tap;
 *   3  swar (conditions: filter2d_arith.swar_plan): two outputs in one uint, columns i and i+2 of
 *      the 16 in the low and high 16-bit lanes, each lane the complement 2^15 - 1 - A of the exact
 *      partial sum A in units of 2^-KEXP (the weights m * 2^-KEXP, m integers read as
 *      (int)(w * 2^KEXP)); a tap is s = -m * pair + s, then the tap's truncation toward zero (KINDS,
 *      a nibble a tap: 0 none, 1 floor, 2 ceiling, 3 by the lane's sign, taken from a byte permute,
 *      see lanes_set); bytes 1 and 3 of ~s << (8 - KEXP - shift) are the two wrapped outputs.  A row
 *      is held as its 16 column pairs x[c] | x[c+2] << 16, c = -1 .. 14.
 * On paths 1 and 2 the output stage is v = rd(trunc(s) * 2^-shift + 1.5*2^23) (an fma rounded down,
 * PTX fma.rm.f32; portable: floor(trunc(s) * 2^-shift) + 1.5*2^23, exact): |trunc(s)| < 2^22, so v is
 * 1.5*2^23 + (trunc(s) >> shift) exactly and the low byte of its bits is (trunc(s) >> shift) mod 256
 * (wrap); SAT=1 clamps v to [1.5*2^23, 1.5*2^23 + 255] first.  2^-shift is sc (prm[3]).  Four
 * such low bytes are packed into a word by byte permutes (PTX prmt with -DUSE_PTX).
 * rz(a + b), an add rounded toward zero, is PTX add.rz.f32 with -DUSE_PTX (NVIDIA), else the
 * rounded-to-nearest sum stepped toward zero when its TwoSum error says it rounded away.
 * The helpers that take a tap's index (lanes_set, trunc_small) are static inline: each is inlined
 * where it is called, so that the tap's kind (a nibble of KINDS) is a constant in the unrolled tap
 * loop; an out-of-line helper computes it at run time, and Oclgrind 21.10 mis-evaluates the switch
 * clang makes of that (tests/oclgrind_probes/narrow_switch.cl).  The other helpers stay plain
 * inline: inlining all of them (static inline) makes PoCL's work-group compile about three times slower.
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

#ifndef KEXP
#define KEXP 0
#endif
#ifndef KINDS
#define KINDS 0
#endif
#ifndef EXACT
#define EXACT 0                               /* 1: every band of ROWS output rows complete ((H-2) % ROWS == 0): no row test */
#endif
#ifndef OFF32
#define OFF32 0                               /* 1: H * W < 2^31, row offsets in 32-bit arithmetic */
#endif

#define MAGIC 8388608.0f
#define CB 12582912.0f                        /* 1.5 * 2^23 */

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

/* byte b of the word u as a float */
inline float pix_word(const uint u, const uint b)
{
#if PATH != 0 && defined(USE_PTX)
    uint r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(u), "r"(0x4B000000u), "r"(0x7540u | b));
    return as_float(r) - MAGIC;
#else
    return pix((u >> (8u * b)) & 0xFFu);
#endif
}

/* (float)(int)s for |s| < 2^22, before tap t: odd taps through trunc() (cvt.rzi.f32.f32, the
 * conversion unit), even taps through the float pipe, so that the two units share the work */
static inline float trunc_small(const float s, const int t)
{
    if ((t & 1) == 0)        /* copysign(rz(|s| + 2^23) - 2^23, s), the magnitude being >= +0: one or */
        return as_float(as_uint(fadd_rz(fabs(s), MAGIC) - MAGIC) | (as_uint(s) & 0x80000000u));
    return trunc(s);
}

/* an input row's raw data for one work-item: its 16 pixels and the two halo pixels (VEC), or 18 bytes */
typedef struct {
#if VEC
    uint4 q;
    uint h0, h1;
#else
    uint b[18];
#endif
} raw_row;

inline raw_row load_raw(__global const uchar *restrict img, const int rr, const int c0, const int W)
{
#if OFF32
    const __global uchar *row = img + (uint)(rr * W);      /* H * W < 2^31: 32-bit offsets */
#else
    const __global uchar *row = img + (size_t)rr * W;
#endif
    raw_row q;
#if VEC
    q.q = *(const __global uint4 *)(row + c0);
    /* guarded bytes: on NVIDIA's OpenCL they were faster than the numba twin's unguarded words
     * beside the chunk (its image padded) */
    q.h0 = c0 > 0 ? row[c0 - 1] : 0u;
    q.h1 = c0 + 16 < W ? row[c0 + 16] : 0u;
#else
#pragma unroll
    for (int j = 0; j < 18; ++j) {
        const int c = c0 - 1 + j;
        q.b[j] = c >= 0 && c < W ? row[c] : 0u;
    }
#endif
    return q;
}

/* the raw row converted: p[0 .. 17] are columns c0-1 .. c0+16 */
inline void convert_row(const raw_row q, float *p)
{
#if VEC
    const uint u[4] = {q.q.s0, q.q.s1, q.q.s2, q.q.s3};
    p[0] = pix(q.h0);
#pragma unroll
    for (int i = 0; i < 16; ++i)
        p[i + 1] = pix_word(u[i / 4], i % 4);
    p[17] = pix(q.h1);
#else
#pragma unroll
    for (int j = 0; j < 18; ++j)
        p[j] = pix(q.b[j]);
#endif
}

#if PATH != 0
/* rd(t * sc + 1.5*2^23) for an integer t, |t| < 2^22, sc = 2^-shift: 1.5*2^23 + (t >> shift) */
inline float scale_rd(const float t, const float sc)
{
#ifdef USE_PTX
    float v;
    asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(v) : "f"(t), "f"(sc), "f"(CB));
    return v;
#else
    return floor(t * sc) + CB;           /* t * sc exact, and the sum exact (spacing 1 in [2^23, 2^24)) */
#endif
}
#endif

#if PATH == 3
#define MK ((1u << KEXP) - 1u)
#define KM2 (MK * 0x10001u)

/* the high half of a below the low half of b: (a >> 16) | (b << 16).  Off NVIDIA through upsample,
 * the same bits: clang makes a funnel shift (llvm.fshl.i32) of the shift form, an LLVM intrinsic that
 * Oclgrind 21.10 cannot interpret (tests/oclgrind_probes/funnel_shift.cl) */
inline uint halves(const uint a, const uint b)
{
#ifdef USE_PTX
    return (a >> 16) | (b << 16);
#else
    return upsample((ushort)b, (ushort)(a >> 16));
#endif
}

/* the raw row as column pairs: e[c + 1] = x[c] | x[c + 2] << 16 for c = -1 .. 14 (relative to c0) */
inline void pair_row(const raw_row q, uint *e)
{
#if VEC
    const uint u[4] = {q.q.s0, q.q.s1, q.q.s2, q.q.s3};
    uint ev[4], od[4];
#pragma unroll
    for (int v = 0; v < 4; ++v) {
        ev[v] = u[v] & 0x00FF00FFu;               /* columns (4v, 4v+2) */
        od[v] = (u[v] >> 8) & 0x00FF00FFu;        /* (4v+1, 4v+3) */
    }
    e[0] = q.h0 | (od[0] << 16);                  /* (-1, 1) */
#pragma unroll
    for (int v = 0; v < 4; ++v) {
        e[4 * v + 1] = ev[v];
        e[4 * v + 2] = od[v];
        if (v < 3) {
            e[4 * v + 3] = halves(ev[v], ev[v + 1]);     /* (4v+2, 4v+4) */
            e[4 * v + 4] = halves(od[v], od[v + 1]);     /* (4v+3, 4v+5) */
        }
    }
    e[15] = halves(ev[3], q.h1);                  /* (14, 16) */
#else
#pragma unroll
    for (int c = 0; c < 16; ++c)
        e[c] = q.b[c] | (q.b[c + 2] << 16);
#endif
}

/* the complemented lanes: each lane holds G = 2^15 - 1 - A (A the partial sum in units of 2^-KEXP),
   so that bit 15 is set exactly where A < 0, and the low KEXP bits of G are all ones where A is
   whole; a tap subtracts the products.  Truncating A toward zero is G | MK where A >= 0 (its floor)
   and (G - MK) | MK where A < 0 (its ceiling).  A sign tap's subtrahend: one byte permute puts 0xFF
   in the low byte of each lane whose bit 15 is set (PTX prmt with selector 0x4B49: byte 1's and
   byte 3's sign replicated into bytes 0 and 2, zeros above), times MK * 0x01010101, which is
   -MK mod 2^32 times 1 / 0xFF: one multiply-add. */
static inline uint lanes_set(const uint s, const int t)
{
    const int kind = (KINDS >> (4 * t)) & 0xF;
    if (kind == 1)
        return s | KM2;
    if (kind == 2)
        return (s - KM2) | KM2;
    if (kind == 3) {
#ifdef USE_PTX
        uint f;
        asm("prmt.b32 %0, %1, %2, %3;" : "=r"(f) : "r"(s), "r"(0u), "r"(0x4B49u));
        return (f * (MK * 0x01010101u) + s) | KM2;
#else
        return (s - ((s >> 15) & 0x10001u) * MK) | KM2;
#endif
    }
    return s;
}

/* bytes 1 and 3 of a and b interleaved: a.1, b.1, a.3, b.3 */
inline uint pack_bytes13(const uint a, const uint b)
{
#ifdef USE_PTX
    uint r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0x7351u));
    return r;
#else
    return ((a >> 8) & 0x00FF00FFu) | (b & 0xFF00FF00u);
#endif
}

/* the lanes of output columns i (low) and i + 2 (high), shifted: bytes 1 and 3 are the outputs */
inline uint output_pair(const int *m, const uint *e0, const uint *e1, const uint *e2, const int i, const int shift)
{
    const uint x[9] = {e0[i], e0[i + 1], e0[i + 2], e1[i], e1[i + 1], e1[i + 2], e2[i], e2[i + 1], e2[i + 2]};
    uint s = 0x7FFF7FFFu;
#pragma unroll
    for (int t = 0; t < 9; ++t)
        s = lanes_set((uint)m[t] * x[t] + s, t);     /* m[t]: the weight negated */
    /* ~s << (8 - KEXP - shift), as one multiply-add (~s = -s - 1): the outputs in bytes 1 and 3;
       the low lane's bits pushed past bit 16 stay below the high lane's output byte */
    const uint sc8 = 1u << (8 - KEXP - shift);
    return s * (0u - sc8) - sc8;
}
#endif

/* output column c0+i: its byte in the low byte of the result (the higher bytes are not zero) */
inline uint output(const float *w, const float *p0, const float *p1, const float *p2, const int i,
                   const int shift, const float sc)
{
    const float x[9] = {p0[i], p0[i + 1], p0[i + 2], p1[i], p1[i + 1], p1[i + 2],
                        p2[i], p2[i + 1], p2[i + 2]};
#if PATH == 0
    int a = f2i_rz_sat(w[0] * x[0]);
#pragma unroll
    for (int t = 1; t < 9; ++t)
        a = f2i_rz_sat((float)a + w[t] * x[t]);
    a >>= shift;
#if SAT
    return (uint)clamp(a, 0, 255);
#else
    return (uint)a;
#endif
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
    float v = scale_rd(trunc(s), sc);
#if SAT
    v = fmin(fmax(v, CB), CB + 255.0f);
#endif
    return as_uint(v);
#endif
}

/* pack4 (the low bytes of four words in one): pack4.cl, prepended by the module */

/* prm = (H, W, shift, bits of sc = 2**-shift): the scalars in one __constant buffer, since NVIDIA's
 * OpenCL charges a launch with more than two scalar arguments microseconds more */
__kernel void filter2d_best(__global const uchar *restrict img, __constant const float *restrict wts,
                            __global uchar *restrict out, __constant const int *restrict prm)
{
    const int H = prm[0], W = prm[1], shift = prm[2];
    const float sc = as_float(prm[3]);
    const int c0 = (int)get_global_id(0) * 16;
    const int r0 = 1 + (int)get_global_id(1) * ROWS;
    if (c0 >= W - 1 || r0 > H - 2)
        return;
    const bool full = c0 >= 1 && c0 + 15 <= W - 2;
#if PATH == 3
    int m[9];
#pragma unroll
    for (int t = 0; t < 9; ++t)
        m[t] = (int)(wts[t] * -(float)(1 << KEXP));      /* exact (the weights are m * 2^-KEXP), negated: the
                                                            complemented lanes subtract the products */
    uint p0[16], p1[16], p2[16];
#define NP 16
#define CONVERT(q, n) pair_row(q, p##n)
#else
    float w[9];
#pragma unroll
    for (int t = 0; t < 9; ++t)
        w[t] = wts[t];
    float p0[18], p1[18], p2[18];
#define CONVERT(q, n) convert_row(q, p##n)
#define NP 18
#endif
    raw_row q = load_raw(img, r0 - 1, c0, W);
    CONVERT(q, 0);
    q = load_raw(img, r0, c0, W);
    CONVERT(q, 1);
    q = load_raw(img, r0 + 1, c0, W);
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
        const int r = r0 + k;
#if !EXACT
        if (r > H - 2)
            return;
#endif
        CONVERT(q, 2);
        if (k + 1 < ROWS)          /* the next row's loads, before this row's work (none after the band) */
            q = load_raw(img, EXACT ? r + 2 : min(r + 2, H - 1), c0, W);   /* EXACT: r + 2 <= H - 1 */
#if PATH == 3
        uint v[16], o[4];
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            v[4 * g] = output_pair(m, p0, p1, p2, 4 * g, shift);
            v[4 * g + 1] = output_pair(m, p0, p1, p2, 4 * g + 1, shift);
            /* columns 4g, 4g+1 (low lanes), 4g+2, 4g+3 (high lanes) */
            o[g] = pack_bytes13(v[4 * g], v[4 * g + 1]);
        }
#define OBYTE(i) ((o[(i) / 4] >> (8 * ((i) % 4))) & 0xFFu)
#define OWORDS (uint4)(o[0], o[1], o[2], o[3])
#else
        uint o[16];
#pragma unroll
        for (int i = 0; i < 16; ++i)
            o[i] = output(w, p0, p1, p2, i, shift, sc);
#define OBYTE(i) o[i]
#define OWORDS (uint4)(pack4(o[0], o[1], o[2], o[3]), pack4(o[4], o[5], o[6], o[7]), \
                       pack4(o[8], o[9], o[10], o[11]), pack4(o[12], o[13], o[14], o[15]))
#endif
#if OFF32
        __global uchar *orow = out + (uint)(r * W);
#else
        __global uchar *orow = out + (size_t)r * W;
#endif
#if VEC
        if (full) {
            *(__global uint4 *)(orow + c0) = OWORDS;
        } else
#endif
        {
#pragma unroll
            for (int i = 0; i < 16; ++i)
                if (c0 + i >= 1 && c0 + i <= W - 2)
                    orow[c0 + i] = (uchar)OBYTE(i);
        }
#pragma unroll
        for (int j = 0; j < NP; ++j) {
            p0[j] = p1[j];
            p1[j] = p2[j];
        }
    }
}
