"""cudarace: matvec on numba-cuda, two kernels with a shared-memory race each and their fixed
twins (a test plugin written from docs/plugins.md; README.md beside pyproject.toml).

The races are the kind a GPU's values miss: a tiled kernel that does not wait before it
overwrites its tile (write-after-read across warps), and a warp-synchronous reduction tail
without ``syncwarp`` (lanes of one warp assumed to run in lockstep).  ``refconv check`` names
both: the simulator sanitizer under ``--cuda sim`` (on by default), compute-sanitizer and the
simulator sanitizer under ``--cuda gpu --sanitize``.
"""
import functools

import refconv.cuda as rc
from refconv import Backend, Range, Variant

T = 64                     # threads per block (two warps); a module constant: NVVM needs a constant shared shape
cuda = None                # numba.cuda, bound by _kernels() as a *module global*


@functools.lru_cache(maxsize=None)
def _kernels():
    global cuda
    cuda = rc.cuda()       # numba.cuda in the mode --cuda chose (never at import time)
    from numba import float64

    def tiled(barrier):
        @cuda.jit
        def matvec_tiled(m, v, y, R, C):
            s = cuda.shared.array(T, float64)
            t = cuda.threadIdx.x
            row = cuda.blockIdx.x * T + t
            r = min(row, R - 1)                # threads past the last row repeat its work (both warps alike)
            acc = 0.0
            k0 = 0
            while k0 < C:
                if k0 + t < C:
                    s[t] = v[k0 + t]
                cuda.syncthreads()             # the tile is staged
                for j in range(min(T, C - k0)):
                    acc += m[r, k0 + j] * s[j]
                if barrier:
                    cuda.syncthreads()         # every thread is done with the tile before the next overwrites it
                k0 += T
            if row < R:
                y[row] = acc
        return matvec_tiled

    def warp(syncwarp):
        @cuda.jit
        def matvec_warp_reduce(m, v, y, R, C):
            s = cuda.shared.array(T, float64)
            t = cuda.threadIdx.x
            row = cuda.blockIdx.x
            acc = 0.0
            c = t
            while c < C:
                acc += m[row, c] * v[c]
                c += T
            s[t] = acc
            cuda.syncthreads()
            if t < 32:                         # the last warp sums the block's 64 partial sums
                x = s[t] + s[t + 32]
                k = 16
                while k > 0:
                    if syncwarp:
                        cuda.syncwarp()        # every lane has read before any lane writes
                    s[t] = x
                    if syncwarp:
                        cuda.syncwarp()        # every lane has written before any lane reads
                    x += s[t + k]
                    k //= 2
                if t == 0:
                    y[row] = x
        return matvec_warp_reduce

    return {"tiled": tiled(True), "tiled_no_barrier": tiled(False),
            "warp_syncwarp": warp(True), "warp_no_syncwarp": warp(False)}


def _run(name, grid_of):
    def run(problem, out):
        m, v = problem.inputs["m"], problem.inputs["v"]
        R, C = m.shape
        to_device = rc.cuda().to_device
        d_y = rc.device_out(out)                   # the checker's poison, on the device
        rc.launch(_kernels()[name][grid_of(R), T], to_device(m), to_device(v), d_y, R, C)
        rc.copy_back(d_y, out)
    return run


def _variants():
    tiles = {"dtype": ("float64",), "rows": Range(1, 96), "cols": Range(T + 1, 4 * T)}   # two tiles at least
    rows = {"dtype": ("float64",), "rows": Range(1, 8), "cols": Range(1, 4 * T)}
    per_tile, per_row = (lambda R: rc.cdiv(R, T)), (lambda R: R)
    docs = {"tiled": "one thread per row, v staged in shared memory a tile at a time",
            "tiled_no_barrier": "the same without the barrier after each tile (a write-after-read race)",
            "warp_syncwarp": "one block per row, a warp-synchronous reduction tail with syncwarp",
            "warp_no_syncwarp": "the same tail without syncwarp (a race between lanes of one warp)"}
    return [Variant(op="matvec", backend="cudarace", name=name, run=_run(name, per_tile if "tiled" in name else per_row),
                    supports=tiles if "tiled" in name else rows, available=rc.reason, doc=doc)
            for name, doc in docs.items()]


backend = Backend(name="cudarace", variants=_variants, **rc.backend_fields())
