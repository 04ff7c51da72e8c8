"""matvec: the matrix-vector kernels of seed 002 (§5, appendix code 6).

``thread_per_row`` (§5.1, the initial method): one thread computes one element of ``w = M v``,
looping over the row.  ``block_per_row`` (§5.2, code 6): one block per row, grid = 2 x the
number of multiprocessors (the simulator: 4) with a grid-stride loop over rows; each thread sums
the columns ``tid, tid+T, ...``, then a shared-memory tree reduction halves the active threads
with a barrier after *every* step (the listing drops the barriers below a half-warp and relies on
warp-synchronous execution, which is wrong since Volta's independent thread scheduling) and a
barrier before the shared buffer is reused for the next row.  ``warp_shuffle``: one warp per row,
reduced with ``cuda.shfl_down_sync``; under the simulator refconv's scheduler gives the shuffle
its CUDA meaning (``sim_warps``), and the variant is unavailable only when that scheduler is
off (``REFCONV_SIM_SCHEDULER=numba``).  Sums are in the input dtype in the kernel's order; the spec's tolerance accepts any
order and FMA contraction.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, sim_work, to_device_poisoned

cuda = None
ORIGIN = "seeds/002_bac98b268d2530e5.txt"
SUPPORTS = {"dtype": ("float32", "float64"), "rows": Range(1), "cols": Range(1)}


@functools.lru_cache(maxsize=None)
def _kernel(kind: str, dtype: str, threads: int):
    global cuda
    cuda = kit.cuda()
    from numba import float32, float64, uint64
    T = threads
    DT = float32 if dtype == "float32" else float64
    # every subscript is a uint64 built from uint64 operands (numba gives a signed index a
    # negative-index wraparound, a 64-bit compare and select per subscript), loops are uint64
    # while loops (numba's range() keeps a signed trip count, a compare and select an iteration)
    U0, U1, U2, U32, UT = np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(32), np.uint64(threads)

    if kind == "thread_per_row":
        @cuda.jit
        def k(m, v, out, R, C):
            r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if r < R:
                uC = uint64(C)
                i = uint64(r) * uC                 # m[r, c]
                c = U0
                acc = DT(0)
                while c < uC:
                    acc += m[i] * v[c]
                    i += U1
                    c += U1
                out[uint64(r)] = acc
        return k

    if kind == "block_per_row":
        @cuda.jit
        def k(m, v, out, R, C):
            tid = cuda.threadIdx.x
            utid = uint64(tid)
            temp = cuda.shared.array(T, DT)
            uR, uC = uint64(R), uint64(C)
            ugrid = uint64(cuda.gridDim.x)
            row = uint64(cuda.blockIdx.x)
            while row < uR:
                acc = DT(0)
                c = utid
                i = row * uC + utid
                while c < uC:
                    acc += m[i] * v[c]
                    c += UT
                    i += UT
                temp[utid] = acc
                cuda.syncthreads()
                s = UT // U2
                while s > U0:
                    if utid < s:
                        temp[utid] += temp[utid + s]
                    cuda.syncthreads()
                    s //= U2
                if tid == 0:
                    out[row] = temp[U0]
                cuda.syncthreads()
                row += ugrid
        return k

    @cuda.jit
    def k(m, v, out, R, C):  # warp_shuffle: one warp per row, T//32 rows per block
        lane = cuda.threadIdx.x % 32
        row = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // 32
        if row < R:  # whole warps take this branch together (32 | blockDim)
            uC = uint64(C)
            c = uint64(lane)
            i = uint64(row) * uC + c
            acc = DT(0)
            while c < uC:
                acc += m[i] * v[c]
                c += U32
                i += U32
            off = 16
            while off > 0:
                acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, off)
                off //= 2
            if lane == 0:
                out[uint64(row)] = acc
    return k


def _make_run(kind):
    def run(problem, out, threads=256):
        cuda_ = kit.cuda()
        m = np.ascontiguousarray(problem.inputs["m"])
        v = np.ascontiguousarray(problem.inputs["v"])
        R, C = m.shape
        k = _kernel(kind, m.dtype.name, threads)
        d_out, n = to_device_poisoned(out)
        d_m, d_v = cuda_.to_device(m.reshape(-1)), cuda_.to_device(v)
        if kind == "thread_per_row":
            grid = cdiv(R, threads)
        elif kind == "block_per_row":
            grid = 2 * kit.sm_count()
        else:
            grid = cdiv(R * 32, threads)
        launch(k[grid, threads], d_m, d_v, d_out, R, C)
        cuda_.synchronize()
        return from_device(d_out, n, out)
    return run


def _fits(kind):
    """The device limits: the block's threads, the 1-D grid (thread_per_row: R/threads;
    block_per_row: 2 x SMs; warp_shuffle: 32*R/threads), block_per_row's shared partial sums,
    M, v and w in device memory."""
    def check(problem, params):
        t = params.get("threads", 128)
        R, C = problem.dims["rows"], problem.dims["cols"]
        isz = np.dtype(problem.dims["dtype"]).itemsize
        grid = {"thread_per_row": cdiv(R, t), "block_per_row": 1, "warp_shuffle": cdiv(R * 32, t)}[kind]
        return fits(problem, threads=t, grid=(grid,), shared=t * isz if kind == "block_per_row" else 0,
                    device_bytes=io_bytes(problem, R, isz))
    return check


def _cost(kind):
    """The simulated work of one example (refconv.cost): thread_per_row, R·C steps; block_per_row,
    each row's T threads take ceil(C/T) steps and log2(T) + 2 barriers (the tree and its fences),
    on a grid of 2 x SMs blocks; warp_shuffle, each row's warp takes ceil(C/32) steps and 5
    shuffles (counted as barriers of a 32-thread group)."""
    def cost(problem, params):
        t = params.get("threads", 128)
        R, C = problem.dims["rows"], problem.dims["cols"]
        if kind == "thread_per_row":
            return sim_work(t, cdiv(R, t), steps=R * C)
        if kind == "block_per_row":
            return sim_work(t, 2 * kit.sm_count(), steps=R * t * cdiv(C, t),
                            barriers=R * t * (t.bit_length() - 1 + 2))
        return sim_work(32, cdiv(R * 32, t) * t // 32, steps=R * 32 * cdiv(C, 32), barriers=R * 32 * 5)
    return cost


def _shfl_available(base):
    def avail():
        why = base()
        if why:
            return why
        if kit.is_sim():
            if not kit.warps_supported():
                return ("warp shuffles (cuda.shfl_down_sync) run under the CUDA simulator only on "
                        "refconv's scheduler, which is off (REFCONV_SIM_SCHEDULER=numba or an "
                        "unsupported numba-cuda); run with --cuda gpu")
        return None
    return avail


def variants():
    available = kit.reason
    return [
        Variant(op="matvec", backend="numba_cuda", name="thread_per_row", run=_make_run("thread_per_row"),
                cost=_cost("thread_per_row"), supports=dict(SUPPORTS), params=(Param("threads", (4, 8, 32, 128, 256), 128),),
                available=available, constraint=_fits("thread_per_row"), origin=f"{ORIGIN} §5.1 초기 방법",
                doc="w[r] = sum_c M[r,c] v[c], one thread per row, sequential over columns"),
        Variant(op="matvec", backend="numba_cuda", name="block_per_row", run=_make_run("block_per_row"),
                cost=_cost("block_per_row"), supports=dict(SUPPORTS), params=(Param("threads", (2, 4, 8, 32, 128, 256, 512), 512),),
                available=available, constraint=_fits("block_per_row"), origin=f"{ORIGIN} §5.2, 부록 코드 6",
                doc="one block per row (grid-stride, grid = 2 x SMs), strided column partial sums, "
                    "shared-memory tree reduction with a barrier after every step"),
        Variant(op="matvec", backend="numba_cuda", name="warp_shuffle", run=_make_run("warp_shuffle"),
                cost=_cost("warp_shuffle"), supports=dict(SUPPORTS), params=(Param("threads", (32, 64, 128, 256), 128),),
                available=_shfl_available(available), constraint=_fits("warp_shuffle"), origin=f"{ORIGIN} §5.2 (warp-level variant of code 6)",
                doc="one warp per row, lanes stride over columns, shfl_down_sync tree reduction"),
    ]
