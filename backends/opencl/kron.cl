/* kron (seed 003): out[i*p + k, j*q + l] = a[i, j] * b[k, l]; T from -DT=..., integer products
 * through the unsigned type so they wrap (as NumPy's) instead of overflowing. */
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif
#ifdef UT
#define MUL(x, y) ((T)((UT)(x) * (UT)(y)))
#else
#define MUL(x, y) ((x) * (y))
#endif

/* The twins of backends/numba_cuda/kron.py: the same kernels over the same launch shapes (kron.py).
 * The sizes n, p, q come in one __constant int buffer: NVIDIA's OpenCL charges a launch with more
 * than two scalar arguments a few microseconds more inside its profiling interval (on one
 * work-item as on a full grid; lab/probes/gpu_opencl_launch_probe.py), a cost that
 * block_launches (one launch per element of A) and streamed (one launch per row block) pay on
 * every launch and the CUDA launches of the Numba twin never pay.  Each kernel takes at most two
 * scalars. */

/* one launch per element (i, j) of A: the p x q block, written into a row-block buffer of
 * p rows x n*q columns at column offset j*q (the paper's C_gpu of N x N*N). */
__kernel void block(__global const T * restrict a, __global const T * restrict b,
                    __global T * restrict rowblk, __constant int *npq, const int i, const int j)
{
    const int n = npq[0], p = npq[1], q = npq[2];
    const int l = get_global_id(0), k = get_global_id(1);
    if (k < p && l < q)
        rowblk[(size_t)k * n * q + j * q + l] = MUL(a[i * n + j], b[k * q + l]);
}

/* rows row0 .. row0+nrows-1 of the (m*p) x (n*q) product into out (nrows x n*q): single_launch
 * (all rows, one launch) and streamed (one launch per row block).  A work-item owns one column
 * and every get_global_size(1)-th row (the launch gives each work-item about ROWS_PER_ITEM rows):
 * the column's (j, l) and its first row's (i, k) are divided out once, then the three offsets
 * out[rr*n*q + col], a[i*n + j], b[k*q + l] are stepped by additions, b's wrapping past the last
 * row of B (k >= p, i.e. bk >= p*q) into a's next row: the Numba twin's loop. */
__kernel void rows(__global const T * restrict a, __global const T * restrict b,
                   __global T * restrict out, __constant int *npq, const int row0, const int nrows)
{
    const int n = npq[0], p = npq[1], q = npq[2], nq = n * q, pq = p * q;
    const int col = get_global_id(0);
    int rr = get_global_id(1);
    if (rr >= nrows || col >= nq)
        return;
    const int j = col / q, l = col - j * q;
    const int row = row0 + rr;
    const int i = row / p, k = row - i * p;
    const int step = get_global_size(1), di = step / p, dk = step - di * p;
    size_t o = (size_t)rr * nq + col;
    const size_t ostep = (size_t)step * nq;
    int ai = i * n + j, bk = k * q + l;
    const int astep = di * n, bstep = dk * q;
    for (; rr < nrows; rr += step) {
        out[o] = MUL(a[ai], b[bk]);
        o += ostep;
        ai += astep;
        bk += bstep;
        if (bk >= pq) {
            bk -= pq;
            ai += n;
        }
    }
}
