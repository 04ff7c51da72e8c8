/* filter2d, 3x3, uint8 image, float weights, paper-faithful int accumulator (seed 000, Ozer &
 * Demirci): every tap does  acc = (int)((float)acc + w * (float)x)  in float32 (no fma
 * contraction), taps kernel-row outer / column inner, then  acc >> shift,  then wrap to uchar.
 * Valid boundary: only the interior (1..H-2, 1..W-2) of the H x W output is written.
 *
 * One source, specialised with -D:
 *   CF=k      thread coarsening along x: a work-item computes k consecutive outputs of one row,
 *             sliding a 3x3 register window (one new column per output);
 *   MEM_GM    weights in __global memory;   MEM_CM  weights in __constant memory;
 *   MEM_SM    the work-group's image tile (WG_Y+2) x (WG_X*CF+2) and the weights are staged in
 *             __local memory behind one barrier;
 *   VEC=1     the CF outputs are stored VN at a time with vstoreVN (VN = 4, or 2 when CF = 2)
 *             where the VN outputs are all interior and VN-aligned; scalar stores elsewhere;
 *   WG_X, WG_Y  the work-group shape the host launches with (compile-time, as the Numba twin's
 *             block shape is: the SM tile's row length is then a constant);
 *   NATIVE_F2I=1  the platform's convert_int_sat_rtz follows the OpenCL C rule (saturate,
 *             NaN -> 0): one conversion a tap (the host sets it for PoCL and NVIDIA).
 * The scalars (H, W, shift, sat) come in one __constant int buffer `prm`: NVIDIA's OpenCL charges
 * a launch with more than two scalar arguments microseconds more.  sat = 0: wrap to uchar as the
 * paper, 1: saturate.
 *
 * The window holds the pixels already converted to float: (float) of a uchar is exact, so each
 * pixel is converted once (when its column enters the window) instead of once a tap.  Every
 * work-item with an interior output computes all CF outputs (columns outside the image read as
 * 0; the results past the interior are never stored), so the unrolled loop has no branch but the
 * stores' and the loads' of the columns that may lie outside the image (x0 - 1, x0 + k for k >= 2).
 * Indices (GM, CM): the place of (y, x0) is computed once; the loads and stores are it plus
 * constants (see below), and each test is a compare of x0 or of lim = W - 2 - x0 with a constant.
 * SM reads its window from the tile and stores through a row pointer (OUT below).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef CF
#define CF 1
#endif
#ifndef VEC
#define VEC 0
#endif
#ifndef NATIVE_F2I
#define NATIVE_F2I 0
#endif
#if !defined(WG_X) || !defined(WG_Y)
#error "filter2d_3x3.cl: the host passes the work-group shape as -DWG_X=.. -DWG_Y=.."
#endif

#if defined(MEM_CM)
#define WSPACE __constant
#else
#define WSPACE __global const
#endif

/* The C of the paper is (int)(float): truncation toward zero.  C leaves NaN and out-of-range
 * values undefined; here they are defined as CUDA's cvt.rzi.s32.f32 does (saturate to int32,
 * NaN -> 0), which is OpenCL C's convert_int_sat_rtz.  Oclgrind 21.10's convert_int_sat_rtz
 * saturates +-Inf and out-of-range values but gives INT_MIN for NaN, so without NATIVE_F2I the
 * NaN case is written out. */
#if NATIVE_F2I
#define F2I(v) convert_int_sat_rtz(v)
#else
inline int f2i_rz_sat(const float v)
{
    return isnan(v) ? 0 : convert_int_sat_rtz(v);
}
#define F2I(v) f2i_rz_sat(v)
#endif
#define TAP(acc, w, x) F2I((float)(acc) + (w) * (x))

__kernel void filter2d_3x3(__global const uchar * restrict img,
                           WSPACE float * restrict wts,
                           __global uchar * restrict out,
                           __constant const int * restrict prm
#if defined(MEM_SM)
                           , __local uchar * tile, __local float * lw
#endif
                           )
{
    const int H = prm[0], W = prm[1], shift = prm[2], sat = prm[3];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int gx = get_group_id(0), gy = get_group_id(1);
    const int y = gy * WG_Y + ly;
    const int x0 = (gx * WG_X + lx) * CF;

#if defined(MEM_SM)
    const int TW = WG_X * CF + 2, TH = WG_Y + 2;
    const int tx0 = gx * WG_X * CF - 1;                 /* image column of tile column 0 */
    const int ty0 = gy * WG_Y - 1;                      /* image row of tile row 0 */
    for (int i = ly * WG_X + lx; i < TW * TH; i += WG_X * WG_Y) {
        const int r = ty0 + i / TW, c = tx0 + i % TW;
        tile[i] = ((uint)r < (uint)H && (uint)c < (uint)W) ? img[r * W + c] : (uchar)0;
    }
    for (int i = ly * WG_X + lx; i < 9; i += WG_X * WG_Y)    /* work-groups of fewer than 9 items too */
        lw[i] = wts[i];
    barrier(CLK_LOCAL_MEM_FENCE);
#define WT(i) lw[i]
#else
#define WT(i) wts[i]
#endif

    if (y < 1 || y > H - 2 || x0 >= W - 1)
        return;
    /* the work-item's outputs x0 + j are interior (x <= W - 2) for j <= lim; x0 + j >= 1 but for
     * j = 0 in a row's first work-item */
    const int lim = W - 2 - x0;

    const float w0 = WT(0), w1 = WT(1), w2 = WT(2), w3 = WT(3), w4 = WT(4),
                w5 = WT(5), w6 = WT(6), w7 = WT(7), w8 = WT(8);

    /* the place of (y, x0), computed once: one 32 x 32 -> 64-bit unsigned multiply-add (y, W,
     * x0 >= 0; H * W may pass 2^31).  Every pixel of the window is a row pointer (that place - W, +0,
     * +W) plus a constant column and every output that place plus a constant: one load or store with
     * an immediate offset each, no index arithmetic a column or an output. */
    const size_t Wz = (uint)W;
    const size_t at = (size_t)(uint)y * (uint)W + (uint)x0;

    /* COL(k, v0, v1, v2): column x0 + k of rows y-1, y, y+1, as floats.  Columns x0 and x0 + 1 are
     * inside the image (x0 < W - 1) and loaded without a test; column x0 - 1 is inside where x0 > 0,
     * column x0 + k (k >= 2) where k - 1 <= lim.  A column outside reads as 0: it feeds only
     * outputs that are not stored. */
#define COL_IN(k) ((k) < 0 ? x0 > 0 : (k) < 2 || lim >= (k) - 1)
#if defined(MEM_SM)
    __local const uchar *t0 = tile + (ly * TW + lx * CF + 1);  /* tile row of y-1, column of x0 */
#define COL(k, v0, v1, v2) do { v0 = (float)t0[k]; v1 = (float)t0[TW + (k)]; \
                                v2 = (float)t0[2 * TW + (k)]; } while (0)
#else
    __global const uchar *p1 = img + at, *p0 = p1 - Wz, *p2 = p1 + Wz;
#define COL(k, v0, v1, v2) do {                                                                \
        if (COL_IN(k)) { v0 = (float)p0[k]; v1 = (float)p1[k]; v2 = (float)p2[k]; }             \
        else { v0 = 0.0f; v1 = 0.0f; v2 = 0.0f; } } while (0)
#endif
/* output x0 + j is stored where it is interior; OUT(j) is its place; VEC_OK(j): the VN outputs
 * from x0 + j are interior and one aligned vector.  The SM seeds keep a row pointer and test each
 * output's column (int indices, as their tile load): with the place of (y, x0) held through the
 * loop instead, the coarsened ones (CF 12, 16) ran slower on NVIDIA's OpenCL. */
#if defined(MEM_SM)
#define OUT_IN(j) (x0 + (j) >= 1 && x0 + (j) <= W - 2)
#define OUT(j) (orow + x0 + (j))
#define VEC_OK(j) (x0 + (j) >= 1 && x0 + (j) + VN - 1 <= W - 2 && ((y * W + x0 + (j)) & (VN - 1)) == 0)
#else
#define OUT_IN(j) ((j) == 0 ? x0 > 0 : lim >= (j))
#define OUT(j) (o + (j))
#define VEC_OK(j) (aligned && OUT_IN(j) && lim >= (j) + VN - 1)
#endif

    /* the 3x3 window: rows y-1, y, y+1 (0, 1, 2); columns a (x-1), b (x), c (x+1) */
    float a0, a1, a2, b0, b1, b2, c0, c1, c2;
    COL(-1, a0, a1, a2);
    COL(0, b0, b1, b2);
    COL(1, c0, c1, c2);
#if defined(MEM_SM)
    __global uchar *orow = out + y * W;
#else
    __global uchar *o = out + at;
#endif
#if VEC
    uchar res[CF];
#endif

#pragma unroll
    for (int j = 0; j < CF; ++j) {
        if (j > 0) {                   /* slide the window one column right */
            a0 = b0; a1 = b1; a2 = b2;
            b0 = c0; b1 = c1; b2 = c2;
            COL(j + 1, c0, c1, c2);
        }
        int acc = 0;
        acc = TAP(acc, w0, a0); acc = TAP(acc, w1, b0); acc = TAP(acc, w2, c0);
        acc = TAP(acc, w3, a1); acc = TAP(acc, w4, b1); acc = TAP(acc, w5, c1);
        acc = TAP(acc, w6, a2); acc = TAP(acc, w7, b2); acc = TAP(acc, w8, c2);
        const int s = acc >> shift;                 /* arithmetic shift: floor */
        const uchar v = sat ? (uchar)clamp(s, 0, 255) : (uchar)s;   /* (uchar)s: the wrap */
#if VEC
        res[j] = v;
#else
        if (OUT_IN(j))
            *OUT(j) = v;
#endif
    }

#if VEC
#if CF % 4 == 0
#define VN 4
#else
#define VN 2
#endif
    /* x0 is a multiple of CF, so of VN: the VN outputs from x0 + j (j a multiple of VN) are one
     * aligned vector where the place of x0 is */
#if !defined(MEM_SM)
    const bool aligned = ((uint)at & (VN - 1)) == 0;
#endif
#pragma unroll
    for (int j = 0; j < CF; j += VN) {
        if (VEC_OK(j)) {
#if VN == 4
            vstore4((uchar4)(res[j], res[j + 1], res[j + 2], res[j + 3]), 0, OUT(j));
#else
            vstore2((uchar2)(res[j], res[j + 1]), 0, OUT(j));
#endif
        } else {
#pragma unroll
            for (int k = 0; k < VN; ++k)
                if (OUT_IN(j + k))
                    *OUT(j + k) = res[j + k];
        }
    }
#endif
}
