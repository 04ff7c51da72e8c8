"""The hazard "warp-synchronous reduction" (issue 23) and its fixed twins, as numba-cuda
variants of ``matvec`` (plugin API 2, written against the public ``refconv.cuda``), used by
``tests/test_sim_warps.py`` through a throw-away plugin whose module does
``from hazard_impls_warp import backend``.

Each kernel computes one row of ``w = M v`` per block (grid-stride over rows, 64 threads): every
thread sums the columns ``t, t + 64, ...`` into shared memory, a barrier, then the first warp
finishes the reduction:

``warp_sync_reduction`` (the hazard)
    the classic CUDA ``warpReduce`` tail -- ``s[t] += s[t + 32]; s[t] += s[t + 16]; ... s[t] +=
    s[t + 1]`` for every ``t < 32`` with no barrier -- which relies on the 32 lanes running in
    lockstep.  Since Volta (independent thread scheduling) nothing orders one lane's read of
    ``s[t + k]`` after the write of lane ``t + k``: a shared-memory race between lanes of one warp.
    On a GPU it gives the right sum in almost every run (docs/sanitizer.md: 20 of 20 on an H100).
``warp_sync_reduction_syncwarp`` (fixed twin)
    the same tail with ``cuda.syncwarp()`` between each read and write of ``s``.
``warp_sync_reduction_shfl`` (fixed twin)
    the tail in registers with ``cuda.shfl_down_sync``.

``HAZARDS``: ``{name: Variant}``; ``FIXED``: which variant fixes which hazard; ``backend``: the
``hazard_warp`` backend that serves all three.
"""
from __future__ import annotations

import refconv.cuda as rc
from refconv import Backend, Range, Variant

T = 64            # threads per block: two warps
FULL = 0xFFFFFFFF
BACKEND = "hazard_warp"
cuda = None       # a module global: the simulator swaps the kernels' global ``cuda``
_K: dict = {}


def _kernels(dtype: str):
    global cuda
    if dtype in _K:
        return _K[dtype]
    cuda = rc.cuda()
    from numba import float32, float64
    DT = float32 if dtype == "float32" else float64

    @cuda.jit
    def warp_sync(m, v, out, R, C):
        s = cuda.shared.array(T, DT)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.x
        while row < R:
            acc = DT(0)
            c = t
            while c < C:
                acc += m[row * C + c] * v[c]
                c += T
            s[t] = acc
            cuda.syncthreads()
            if t < 32:             # "the last warp runs in lockstep": no barriers below
                s[t] += s[t + 32]
                s[t] += s[t + 16]
                s[t] += s[t + 8]
                s[t] += s[t + 4]
                s[t] += s[t + 2]
                s[t] += s[t + 1]
            if t == 0:
                out[row] = s[0]
            cuda.syncthreads()     # s is reused for the next row
            row += cuda.gridDim.x

    @cuda.jit
    def warp_syncwarp(m, v, out, R, C):
        s = cuda.shared.array(T, DT)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.x
        while row < R:
            acc = DT(0)
            c = t
            while c < C:
                acc += m[row * C + c] * v[c]
                c += T
            s[t] = acc
            cuda.syncthreads()
            if t < 32:
                x = s[t] + s[t + 32]
                k = 16
                while k > 0:
                    cuda.syncwarp()    # every lane has read before anyone writes
                    s[t] = x
                    cuda.syncwarp()    # every lane has written before anyone reads
                    x += s[t + k]
                    k //= 2
                if t == 0:
                    out[row] = x
            cuda.syncthreads()
            row += cuda.gridDim.x

    @cuda.jit
    def warp_shfl(m, v, out, R, C):
        s = cuda.shared.array(T, DT)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.x
        while row < R:
            acc = DT(0)
            c = t
            while c < C:
                acc += m[row * C + c] * v[c]
                c += T
            s[t] = acc
            cuda.syncthreads()
            if t < 32:
                x = s[t] + s[t + 32]
                off = 16
                while off > 0:
                    x += cuda.shfl_down_sync(FULL, x, off)
                    off //= 2
                if t == 0:
                    out[row] = x
            cuda.syncthreads()
            row += cuda.gridDim.x

    _K[dtype] = {"warp_sync_reduction": warp_sync, "warp_sync_reduction_syncwarp": warp_syncwarp,
                 "warp_sync_reduction_shfl": warp_shfl}
    return _K[dtype]


def _make_run(name):
    def run(problem, out):
        cuda_ = rc.cuda()
        m, v = problem.inputs["m"], problem.inputs["v"]
        R, C = m.shape
        k = _kernels(m.dtype.name)[name]
        d_out = rc.device_out(out)
        rc.launch(k[min(R, 4), T], cuda_.to_device(m.reshape(-1).copy()), cuda_.to_device(v), d_out, R, C)
        rc.copy_back(d_out, out)
        return out
    return run


SUPPORTS = {"dtype": ("float32", "float64"), "rows": Range(1, 16), "cols": Range(1, 200)}
DOCS = {"warp_sync_reduction": "warp-synchronous shared-memory tail, no syncwarp (the hazard)",
        "warp_sync_reduction_syncwarp": "the same tail with syncwarp between reads and writes (fixed twin)",
        "warp_sync_reduction_shfl": "the tail in registers with shfl_down_sync (fixed twin)"}
HAZARDS = {name: Variant(op="matvec", backend=BACKEND, name=name, run=_make_run(name), supports=dict(SUPPORTS),
                         available=rc.reason, doc=doc)
           for name, doc in DOCS.items()}
#: hazard -> its fixed twins
FIXED = {"warp_sync_reduction": ("warp_sync_reduction_syncwarp", "warp_sync_reduction_shfl")}

backend = Backend(name=BACKEND, variants=lambda: list(HAZARDS.values()), available=rc.reason,
                  describe=rc.describe, target=rc.target, preflight=rc.preflight)
