/* matvec y = m @ v (seed 002): T = float or double (-DT=...).
 *
 * thread_per_row and block_per_row are the twins of backends/numba_cuda/matvec.py: the same
 * launch shape (matvec.py) and the same order of each thread's sum.  NVVM unrolls the Numba
 * kernels' column loops by four: a thread issues the loads of four columns, then adds their
 * products to acc one after another, in column order.  The loops here are unrolled the same way
 * by hand, so that a thread keeps four loads of m in flight whatever the OpenCL compiler does with
 * the loop (a memory-bound strided loop with one load in flight per thread waits on DRAM
 * latency).  The unrolling does not reassociate: acc takes the products one at a time in column
 * order, as the Numba twin's does.  Indices are size_t from the row's base pointer, as the Numba
 * twin's uint64 subscripts. */
#pragma OPENCL FP_CONTRACT OFF
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif

/* the initial method: one work-item per row (the launch has one work-item per row, rounded up to
 * whole work-groups), sequential over the row's columns */
__kernel void thread_per_row(__global const T * restrict m, __global const T * restrict v,
                             __global T * restrict y, const int R, const int C)
{
    const size_t r = get_global_id(0), n = (size_t)C;
    if (r >= (size_t)R)
        return;
    __global const T *row = m + r * n;
    T acc = (T)0;
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
        const T m0 = row[c], m1 = row[c + 1], m2 = row[c + 2], m3 = row[c + 3];
        const T v0 = v[c], v1 = v[c + 1], v2 = v[c + 2], v3 = v[c + 3];
        acc += m0 * v0;
        acc += m1 * v1;
        acc += m2 * v2;
        acc += m3 * v3;
    }
    for (; c < n; ++c)
        acc += row[c] * v[c];
    y[r] = acc;
}

#ifdef WG
/* the optimised method: one work-group of WG work-items per row (-DWG=..., a power of two: the
 * Numba twin's compile-time threads), grid-stride over rows; every item sums the columns l, l+WG,
 * l+2*WG, ..., then a __local tree reduction with a barrier after every step, and a barrier before
 * the buffer is reused for the next row (the listing drops the barriers below a half-warp; OpenCL
 * promises no lock-step).  WG is a build-time constant so that the loads of an unrolled step are
 * one base address and constant offsets, as in the Numba twin, and ptxas issues all eight before
 * the first add; with a run-time stride each load has its own 64-bit address and ptxas interleaves
 * the loads with the adds, so fewer of a thread's loads are in flight. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void block_per_row(__global const T * restrict m, __global const T * restrict v,
                   __global T * restrict y, const int R, const int C)
{
    __local T t[WG];
    const size_t l = get_local_id(0), n = (size_t)C;
    for (size_t r = get_group_id(0); r < (size_t)R; r += get_num_groups(0)) {
        __global const T *row = m + r * n;
        T acc = (T)0;
        size_t c = l;
        for (; c + 3 * WG < n; c += 4 * WG) {
            const T m0 = row[c], m1 = row[c + WG], m2 = row[c + 2 * WG], m3 = row[c + 3 * WG];
            const T v0 = v[c], v1 = v[c + WG], v2 = v[c + 2 * WG], v3 = v[c + 3 * WG];
            acc += m0 * v0;
            acc += m1 * v1;
            acc += m2 * v2;
            acc += m3 * v3;
        }
        for (; c < n; c += WG)
            acc += row[c] * v[c];
        t[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t s = WG / 2; s > 0; s >>= 1) {
            if (l < s)
                t[l] += t[l + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l == 0)
            y[r] = t[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

#ifdef USE_SUBGROUPS
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
/* one sub-group per row: strided partial sums, then sub_group_reduce_add (the warp shuffle) */
__kernel void warp_shuffle(__global const T * restrict m, __global const T * restrict v,
                           __global T * restrict y, const int R, const int C)
{
    const int lane = get_sub_group_local_id(), width = get_sub_group_size();
    const int sg = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
    const int nsg = get_num_groups(0) * get_num_sub_groups();
    for (int r = sg; r < R; r += nsg) {
        T acc = (T)0;
        for (int c = lane; c < C; c += width)
            acc += m[(size_t)r * C + c] * v[c];
        acc = sub_group_reduce_add(acc);
        if (lane == 0)
            y[r] = acc;
    }
}
#endif
