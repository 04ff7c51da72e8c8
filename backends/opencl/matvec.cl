/* matvec y = m @ v (seed 002): T = float or double (-DT=...). */
#pragma OPENCL FP_CONTRACT OFF
/* double: cl_khr_fp64 is enabled by the build's preamble (_build.FP64_PREAMBLE) */
#ifndef T
#define T float
#endif

/* the initial method: one work-item per row (grid-stride over rows) */
__kernel void thread_per_row(__global const T * restrict m, __global const T * restrict v,
                             __global T * restrict y, const int R, const int C)
{
    for (int r = get_global_id(0); r < R; r += get_global_size(0)) {
        T acc = (T)0;
        for (int c = 0; c < C; ++c)
            acc += m[(size_t)r * C + c] * v[c];
        y[r] = acc;
    }
}

/* the optimised method: one work-group per row, grid-stride over rows; every item sums a strided
 * slice of the row, then a __local tree reduction (work-group size a power of two) with a
 * barrier after every step, and a barrier before the buffer is reused for the next row (the
 * listing drops the barriers below a half-warp; OpenCL promises no lock-step). */
__kernel void block_per_row(__global const T * restrict m, __global const T * restrict v,
                            __global T * restrict y, const int R, const int C, __local T *t)
{
    const int l = get_local_id(0), n = get_local_size(0);
    for (int r = get_group_id(0); r < R; r += get_num_groups(0)) {
        T acc = (T)0;
        for (int c = l; c < C; c += n)
            acc += m[(size_t)r * C + c] * v[c];
        t[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = n / 2; s > 0; s >>= 1) {
            if (l < s)
                t[l] += t[l + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l == 0)
            y[r] = t[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

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
