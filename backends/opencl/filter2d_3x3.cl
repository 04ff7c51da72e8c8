/* filter2d, 3x3, uint8 image, float weights, paper-faithful int accumulator (seed 000, Ozer &
 * Demirci): every tap does  acc = (int)((float)acc + w * (float)x)  in float32 (no fma
 * contraction), taps kernel-row outer / column inner, then  acc >> shift,  then wrap to uchar.
 * Valid boundary: only the interior (1..H-2, 1..W-2) of the H x W output is written.
 *
 * One source, specialised with -D:
 *   CF=k      thread coarsening along x: a work-item computes k consecutive outputs of one row,
 *             sliding a 3x3 register window (one new column per output);
 *   MEM_GM    weights in __global memory;   MEM_CM  weights in __constant memory;
 *   MEM_SM    the work-group's image tile (wg_y+2) x (wg_x*CF+2) and the weights are staged in
 *             __local memory behind one barrier;
 *   VEC=1     the CF outputs are stored VN at a time with vstoreVN (VN = 4, or 2 when CF = 2)
 *             where the VN outputs are all interior and VN-aligned; scalar stores elsewhere.
 * Runtime arguments: shift, sat (0: wrap to uchar as the paper, 1: saturate).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef CF
#define CF 1
#endif
#ifndef VEC
#define VEC 0
#endif

#if defined(MEM_CM)
#define WSPACE __constant
#else
#define WSPACE __global const
#endif

/* The C of the paper is (int)(float): truncation toward zero.  C leaves NaN and out-of-range
 * values undefined; here they are defined as CUDA's cvt.rzi.s32.f32 does (saturate to int32,
 * NaN -> 0), written out because convert_int_sat_rtz differs between implementations there
 * (Oclgrind 21.10 does not saturate NaN / Inf the same way as PoCL). */
inline int f2i_rz_sat(const float v)
{
    if (isnan(v))
        return 0;
    if (v >= 2147483648.0f)
        return INT_MAX;
    if (v < -2147483648.0f)
        return INT_MIN;
    return (int)v;
}
#define TAP(acc, w, x) f2i_rz_sat((float)(acc) + (w) * (float)(x))

__kernel void filter2d_3x3(__global const uchar * restrict img,
                           WSPACE float * restrict wts,
                           __global uchar * restrict out,
                           const int H, const int W, const int shift, const int sat
#if defined(MEM_SM)
                           , __local uchar * tile, __local float * lw
#endif
                           )
{
    const int y = get_global_id(1);
    const int x0 = get_global_id(0) * CF;

#if defined(MEM_SM)
    const int wgx = get_local_size(0), wgy = get_local_size(1);
    const int TW = wgx * CF + 2, TH = wgy + 2;
    const int tx0 = get_group_id(0) * wgx * CF - 1;     /* image column of tile column 0 */
    const int ty0 = get_group_id(1) * wgy - 1;          /* image row of tile row 0 */
    const int lid = get_local_id(1) * wgx + get_local_id(0), nl = wgx * wgy;
    for (int i = lid; i < TW * TH; i += nl) {
        const int r = ty0 + i / TW, c = tx0 + i % TW;
        tile[i] = (r >= 0 && r < H && c >= 0 && c < W) ? img[r * W + c] : (uchar)0;
    }
    for (int i = lid; i < 9; i += nl)      /* work-groups of fewer than 9 items too */
        lw[i] = wts[i];
    barrier(CLK_LOCAL_MEM_FENCE);
#define PIX(r, c) tile[((r) - ty0) * TW + ((c) - tx0)]
#define WT(i) lw[i]
#else
#define PIX(r, c) img[(r) * W + (c)]
#define WT(i) wts[i]
#endif

    if (y < 1 || y > H - 2)
        return;

    const float w0 = WT(0), w1 = WT(1), w2 = WT(2), w3 = WT(3), w4 = WT(4),
                w5 = WT(5), w6 = WT(6), w7 = WT(7), w8 = WT(8);
    /* the 3x3 window: rows y-1, y, y+1; columns a (x-1), b (x), c (x+1) */
    uchar a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0, c0 = 0, c1 = 0, c2 = 0;
    int started = 0;
#if VEC
    uchar res[CF];
#endif

    for (int j = 0; j < CF; ++j) {
        const int x = x0 + j;
        if (x < 1 || x > W - 2) {
#if VEC
            res[j] = 0;
#endif
            continue;
        }
        if (!started) {
            a0 = PIX(y - 1, x - 1); b0 = PIX(y - 1, x); c0 = PIX(y - 1, x + 1);
            a1 = PIX(y,     x - 1); b1 = PIX(y,     x); c1 = PIX(y,     x + 1);
            a2 = PIX(y + 1, x - 1); b2 = PIX(y + 1, x); c2 = PIX(y + 1, x + 1);
            started = 1;
        } else {                       /* slide the window one column right */
            a0 = b0; a1 = b1; a2 = b2;
            b0 = c0; b1 = c1; b2 = c2;
            c0 = PIX(y - 1, x + 1); c1 = PIX(y, x + 1); c2 = PIX(y + 1, x + 1);
        }
        int acc = 0;
        acc = TAP(acc, w0, a0); acc = TAP(acc, w1, b0); acc = TAP(acc, w2, c0);
        acc = TAP(acc, w3, a1); acc = TAP(acc, w4, b1); acc = TAP(acc, w5, c1);
        acc = TAP(acc, w6, a2); acc = TAP(acc, w7, b2); acc = TAP(acc, w8, c2);
        const int s = acc >> shift;                 /* arithmetic shift: floor */
        const uchar v = sat ? (uchar)clamp(s, 0, 255) : (uchar)(s & 0xFF);
#if VEC
        res[j] = v;
#else
        out[y * W + x] = v;
#endif
    }

#if VEC
#if CF % 4 == 0
#define VN 4
#else
#define VN 2
#endif
    for (int j = 0; j < CF; j += VN) {
        const int x = x0 + j;
        const int base = y * W + x;
        if (x >= 1 && x + VN - 1 <= W - 2 && (base % VN) == 0) {
#if VN == 4
            vstore4((uchar4)(res[j], res[j + 1], res[j + 2], res[j + 3]), 0, out + base);
#else
            vstore2((uchar2)(res[j], res[j + 1]), 0, out + base);
#endif
        } else {
            for (int k = 0; k < VN; ++k)
                if (x + k >= 1 && x + k <= W - 2)
                    out[base + k] = res[j + k];
        }
    }
#endif
}
