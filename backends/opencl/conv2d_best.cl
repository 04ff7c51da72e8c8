/* conv2d, refconv's own design (issue #24), the twin of conv2d/numba_cuda/best: an implicit GEMM
 *
 *   out[n, m, oy, ox] = bias[m] + sum_k A[k, m] * B[k, q],   k = (c*R + r)*S + s,
 *   q = (n*Ho + oy)*Wo + ox,  A = the filters K-major [Kpad][Mpad] (host, zero padded),
 *   B[k, q] = xpad[n, c, oy*sy + r*dy, ox*sx + s*dx] gathered while staging, through the table
 *   ktab[3][Kpad] = (c*H*W + r*dy*W + s*dx, r*dy, s*dx); rows past K lie far above the image.
 *
 * A work-group of (BN/TN) x (BM/TM) items computes a BM x BN tile of out[m, q], an item a TM x TN
 * micro-tile in registers (rows ty*TM + i, columns tx*CG + COL(j): groups of CG consecutive columns,
 * CG = 4 where TN allows, the groups THX*CG apart; conv2d_gemm.Tile.col), so that a group of B and
 * four rows of A are one 16-byte __local load each.  K is walked in BK-deep slices
 * staged in two __local buffers, the next slice loaded into registers while the current one is
 * used: one barrier a slice.  Split-K: group dim 2 takes one of the K ranges and writes
 * part[z][M][NQ] (direct = 0); reduce_split sums them in order and adds the bias.  Padding cells
 * load 0 and are multiplied like any other (w*0, as the spec).  T = float or double; BM, BN, TM,
 * TN, BK from -D (backends/conv2d_gemm.py TILES).
 *
 * ONE (-DONE=1): the 1x1 path (1x1 filter, stride 1, no padding): B[k, q] = x[n*CHW + k*HoWo + p]
 * for k < K (0 past K), no table and no bounds test.  No fused split-K reduction (the Numba twin
 * has one): OpenCL 1.2 has no device-scope fence, and the last-work-group pattern failed the check
 * on NVIDIA (an H100); cnt is unused. */
#pragma OPENCL FP_CONTRACT ON
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif
#define THX (BN / TN)
#define THY (BM / TM)
#define NT (THX * THY)
#define NA (BK * BM / NT)
#define NB (BK * BN / NT)
#define SA (NT / BM)
#define SB (NT / BN)
#define CG (TN % 4 == 0 ? 4 : TN)
#define COL(j) (((j) / CG) * THX * CG + (j) % CG)
#define V4_(t) t##4
#define V4(t) V4_(t)
/* r[o..o+3] = the four __local elements at p, one vector load (p is 4-element aligned: the stage
 * buffers are 32-byte aligned, the offsets multiples of 4) */
#define LDS4(r, o, p) { const V4(T) v4_ = *(__local const V4(T) *)(p); \
                        r[(o)] = v4_.s0; r[(o) + 1] = v4_.s1; r[(o) + 2] = v4_.s2; r[(o) + 3] = v4_.s3; }
#ifndef ONE
#define ONE 0
#endif

/* the k-tile starting at row k into registers ra (A) and rb (B, gathered; 0 outside the image;
 * ONE: x[xb + k*HoWo], 0 for k >= K) */
inline void load_tile(const int k, __global const T * restrict ap, const int Mpad, const int ka,
                      __global const T * restrict x, const long xb, __global const int * restrict ktab,
                      const int Kpad, const int kb, const int iy0, const int ix0, const int H, const int W,
                      const int HoWo, const int K, T *ra, T *rb)
{
#pragma unroll
    for (int i = 0; i < NA; ++i)
        ra[i] = ap[(size_t)(k + ka + i * SA) * Mpad];
#pragma unroll
    for (int i = 0; i < NB; ++i) {
        const int kx = k + kb + i * SB;
#if ONE
        rb[i] = kx < K ? x[xb + kx * HoWo] : (T)0;      /* kx*HoWo < C*H*W < 2**31 (index_limit) */
#else
        const int iy = iy0 + ktab[Kpad + kx], ix = ix0 + ktab[2 * Kpad + kx];
        rb[i] = ((uint)iy < (uint)H && (uint)ix < (uint)W) ? x[xb + ktab[kx]] : (T)0;
#endif
    }
}

/* the registers into stage buffers as, bs */
inline void store_tile(__local T *as, __local T *bs, const int ka, const int ja, const int kb, const int jb,
                       const T *ra, const T *rb)
{
#pragma unroll
    for (int i = 0; i < NA; ++i)
        as[(ka + i * SA) * BM + ja] = ra[i];
#pragma unroll
    for (int i = 0; i < NB; ++i)
        bs[(kb + i * SB) * BN + jb] = rb[i];
}

#define LOAD_TILE(k) load_tile((k), ap, Mpad, ka, x, xb, ktab, Kpad, kb, iy0, ix0, H, W, HoWo, K, ra, rb)
#define STORE_TILE(buf) store_tile(As[buf], Bs[buf], ka, ja, kb, jb, ra, rb)

__kernel __attribute__((reqd_work_group_size(THX, THY, 1)))
void gemm(__global const T * restrict a, __global const T * restrict x, __global const int * restrict ktab,
          __global T * restrict part, __global T * restrict out, __global const T * restrict bias,
          __global int *cnt, __constant const int * restrict prm)
{
    /* the scalars in one __constant buffer (PRM_* order, conv2d_best.py): NVIDIA's OpenCL charged
     * a launch with more than two scalar arguments a few microseconds more (an H100) */
    const int M = prm[0], NQ = prm[1], HoWo = prm[2], Wo = prm[3], H = prm[4], W = prm[5], CHW = prm[6];
    const int sy = prm[7], sx = prm[8], py = prm[9], px = prm[10], Mpad = prm[11], Kpad = prm[12];
    const int kt_per = prm[13], KT = prm[14], K = prm[15], has_bias = prm[16], direct = prm[17];
    __local T As[2][BK * BM] __attribute__((aligned(32)));
    __local T Bs[2][BK * BN] __attribute__((aligned(32)));
    const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * THX + tx;
    const int q0 = get_group_id(0) * BN, m0 = get_group_id(1) * BM, z = get_group_id(2);
    const int kt0 = z * kt_per, nt = min(kt_per, KT - kt0);
    const int ja = tid % BM, ka = tid / BM, jb = tid % BN, kb = tid / BN;
    const int qb = min(q0 + jb, NQ - 1);               /* past the last pixel: a valid one, never stored */
    const int nb = qb / HoWo, pb = qb - nb * HoWo, oy = pb / Wo, ox = pb - oy * Wo;
    const int iy0 = oy * sy - py, ix0 = ox * sx - px;
#if ONE
    const long xb = (long)nb * CHW + pb;
#else
    const long xb = (long)nb * CHW + (long)iy0 * W + ix0;
#endif
    __global const T *ap = a + m0 + ja;
    T ra[NA], rb[NB];
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = (T)0;

    LOAD_TILE(kt0 * BK);
    STORE_TILE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < nt; ++t) {
        const int cur = t & 1;
        if (t + 1 < nt)
            LOAD_TILE((kt0 + t + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T av[TM], bv[TN];
#if TM % 4 == 0
#pragma unroll
            for (int h = 0; h < TM; h += 4)
                LDS4(av, h, &As[cur][kk * BM + ty * TM + h]);
#else
#pragma unroll
            for (int i = 0; i < TM; ++i)
                av[i] = As[cur][kk * BM + ty * TM + i];
#endif
#if CG == 4
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                LDS4(bv, j, &Bs[cur][kk * BN + tx * CG + COL(j)]);
#else
#pragma unroll
            for (int j = 0; j < TN; ++j)
                bv[j] = Bs[cur][kk * BN + tx * CG + COL(j)];
#endif
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += av[i] * bv[j];
        }
        if (t + 1 < nt)
            STORE_TILE(1 - cur);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int q = q0 + tx * CG + COL(j);
        if (q < NQ) {
            const int n = q / HoWo;
            const long o = q + (long)n * (M - 1) * HoWo;
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int m = m0 + ty * TM + i;
                if (m < M) {
                    if (direct) {
                        T v = acc[i][j];
                        if (has_bias)
                            v += bias[m];
                        out[o + (long)m * HoWo] = v;
                    } else {
                        part[((long)z * M + m) * NQ + q] = acc[i][j];
                    }
                }
            }
        }
    }
}

/* out[n, m, pixel] = sum_z part[z, m, q] (z in order) + bias[m], q = n*HoWo + pixel;
 * prm = (M, NQ, HoWo, split, has_bias) */
__kernel void reduce_split(__global const T * restrict part, __global const T * restrict bias,
                           __global T * restrict out, __constant const int * restrict prm)
{
    const int M = prm[0], NQ = prm[1], HoWo = prm[2], split = prm[3], has_bias = prm[4];
    const int i = get_global_id(0);
    if (i >= M * NQ)
        return;
    const int m = i / NQ, q = i - m * NQ;
    T s = part[i];
    for (int z = 1; z < split; ++z)
        s += part[(long)z * M * NQ + i];
    if (has_bias)
        s += bias[m];
    const int n = q / HoWo;
    out[q + (long)n * (M - 1) * HoWo + (long)m * HoWo] = s;
}
