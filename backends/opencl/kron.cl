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

/* one launch per element (i, j) of A: the p x q block, written into a row-block buffer of
 * p rows x n*q columns at column offset j*q (the paper's C_gpu of N x N*N). */
__kernel void block(__global const T * restrict a, __global const T * restrict b,
                    __global T * restrict rowblk, const int n, const int p, const int q,
                    const int i, const int j)
{
    const int l = get_global_id(0), k = get_global_id(1);
    if (k < p && l < q)
        rowblk[(size_t)k * n * q + j * q + l] = MUL(a[i * n + j], b[k * q + l]);
}

/* the row-block of A's row i: p rows x n*q columns, one launch.  A work-item owns one column
 * and every get_global_size(1)-th row: the column's (j, l) and A[i, j] are fetched once. */
__kernel void rowblock(__global const T * restrict a, __global const T * restrict b,
                       __global T * restrict rowblk, const int n, const int p, const int q, const int i)
{
    const int col = get_global_id(0);
    int k = get_global_id(1);
    if (k >= p || col >= n * q)
        return;
    const int j = col / q, l = col - j * q;
    const T aij = a[i * n + j];
    for (; k < p; k += get_global_size(1))
        rowblk[(size_t)k * n * q + col] = MUL(aij, b[k * q + l]);
}

/* the whole (m*p) x (n*q) product, one launch.  A work-item owns one column and every
 * get_global_size(1)-th row: the column's (j, l) is divided out once, the row's (i, k) stepped
 * without a division (the launch gives each work-item about ROWS_PER_ITEM rows). */
__kernel void whole(__global const T * restrict a, __global const T * restrict b,
                    __global T * restrict out, const int m, const int n, const int p, const int q)
{
    const int col = get_global_id(0);
    int row = get_global_id(1);
    if (row >= m * p || col >= n * q)
        return;
    const int j = col / q, l = col - j * q;
    int i = row / p, k = row - i * p;
    const int step = get_global_size(1), di = step / p, dk = step - di * p;
    __global const T *brow = b + l;
    for (; row < m * p; row += step) {
        out[(size_t)row * n * q + col] = MUL(a[i * n + j], brow[k * q]);
        i += di;
        k += dk;
        if (k >= p) {
            k -= p;
            ++i;
        }
    }
}
