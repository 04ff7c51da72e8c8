"""Deliberately buggy Numba CUDA kernels (and clean ones), one or more per sanitizer class.

Each case in :data:`CASES` names its kernel, a ``launch()`` that runs it on a small problem and
returns ``(output, expected)``, the finding class the refconv sanitizer must report and the
marker of the source line it must name (``# BUG:<marker>`` on that line).  The same module runs
unchanged under the CUDA simulator (tests) and on a real GPU (``gpu_driver.py``).

The kernels use ``cuda`` from ``numba``: the simulator swaps it for its fake module at launch.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, float32

# module-level constants: fine for the simulator and for the real compiler as plain literals ...
TILE = 16
TILE_PAD = TILE + 1  # computed here, at import: a plain constant to the compiler
RED = 128
N1 = 64
N1_HALO = N1 + 2  # likewise; writing N1 + 2 inside the kernel is rejected by the GPU compiler
# ... but T + 9 in a shared-array shape is not a compile-time constant for the real compiler
T = 16


# ---------------------------------------------------------------------------- out-of-bounds

@cuda.jit
def neg_shared_index(a, out):
    s = cuda.shared.array(N1, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[t] - s[t - 1]  # BUG:neg_shared


@cuda.jit
def global_oob(a, out):
    i = cuda.grid(1)
    out[i] = a[i] * 2.0  # BUG:global_oob   (no `if i < n` guard: the grid is larger than n)


# ---------------------------------------------------------------------------- shared races

@cuda.jit
def tile_missing_barrier(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    tile[ty, tx] = a[y, x]  # BUG:tile_write
    # missing cuda.syncthreads() here
    ox = cuda.blockIdx.y * TILE + tx
    oy = cuda.blockIdx.x * TILE + ty
    out[oy, ox] = tile[tx, ty]  # BUG:tile_read


@cuda.jit
def warp_reduce_no_barrier(a, out):
    s = cuda.shared.array(RED, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    if t < 64:
        s[t] += s[t + 64]
    cuda.syncthreads()
    if t < 32:  # "warp-synchronous": no barriers from here on
        s[t] += s[t + 32]
        s[t] += s[t + 16]  # BUG:warp_race
        s[t] += s[t + 8]
        s[t] += s[t + 4]
        s[t] += s[t + 2]
        s[t] += s[t + 1]
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


# ---------------------------------------------------------------------------- barrier divergence

@cuda.jit
def early_return_sum(a, out, n):
    s = cuda.shared.array(RED, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= n:
        return  # threads past the end leave before the barriers
    s[t] = a[i]
    cuda.syncthreads()  # BUG:early_return
    stride = RED // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def fused_partial_stage(a, out, n):
    # 3-tap box filter, fused: each block stages its tile plus a one-element halo on each side
    s = cuda.shared.array(N1_HALO, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= n:
        return  # the last block returns early: its right halo is never staged
    s[t + 1] = a[i]
    if t == 0:
        s[0] = a[i - 1] if i > 0 else 0.0
    if t == N1 - 1:
        s[N1 + 1] = a[i + 1] if i + 1 < n else 0.0
    cuda.syncthreads()  # BUG:fused_barrier
    out[i] = s[t] + s[t + 1] + s[t + 2]  # BUG:fused_read


# ---------------------------------------------------------------------------- uninitialised

@cuda.jit
def uninit_shared(a, out):
    s = cuda.shared.array(N1, float32)
    t = cuda.threadIdx.x
    if t % 2 == 0:
        s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[t]  # BUG:uninit


@cuda.jit
def uninit_local(a, out):
    acc = cuda.local.array(4, float32)
    t = cuda.threadIdx.x
    for k in range(3):  # acc[3] is never set
        acc[k] = a[t] * k
    out[t] = acc[0] + acc[1] + acc[2] + acc[3]  # BUG:uninit_local


# ---------------------------------------------------------------------------- compile-only bug

@cuda.jit
def global_shape(a, out):
    s = cuda.shared.array((T + 9, T + 9), float32)  # BUG:global_shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    s[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = s[tx, ty]


# ---------------------------------------------------------------------------- clean kernels

@cuda.jit
def clean_tile_transpose(a, out, h, w):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    if y < h and x < w:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    ox = cuda.blockIdx.y * TILE + tx
    oy = cuda.blockIdx.x * TILE + ty
    if oy < w and ox < h:
        out[oy, ox] = tile[tx, ty]


@cuda.jit
def clean_reduce(a, out, n):
    s = cuda.shared.array(RED, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < n else 0.0
    cuda.syncthreads()
    stride = RED // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def clean_histogram(a, out):
    h = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    if t < 8:
        h[t] = 0.0
    cuda.syncthreads()
    cuda.atomic.add(h, int(a[cuda.grid(1)]) % 8, 1.0)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(out, t, h[t])


# ---------------------------------------------------------------------------- launches

def _f32(x):
    return np.ascontiguousarray(x, dtype=np.float32)


def run_neg_shared():
    a = _f32(np.arange(N1) % 7 + 1)
    out = np.zeros(N1, np.float32)
    neg_shared_index[1, N1](a, out)
    exp = a - np.concatenate([[0.0], a[:-1]]).astype(np.float32)  # what a guarded kernel gives
    return out, exp


def run_global_oob():
    n = 40
    a = _f32(np.arange(n))
    out = np.zeros(n, np.float32)
    global_oob[2, 32](a, out)
    return out, a * 2


def run_tile_missing_barrier():
    a = _f32(np.arange(2 * TILE * TILE).reshape(TILE, 2 * TILE))
    out = np.zeros((2 * TILE, TILE), np.float32)
    tile_missing_barrier[(2, 1), (TILE, TILE)](a, out)
    return out, a.T.copy()


def run_warp_reduce():
    a = _f32(np.arange(2 * RED) % 5)
    out = np.zeros(2, np.float32)
    warp_reduce_no_barrier[2, RED](a, out)
    return out, a.reshape(2, RED).sum(1)


def run_early_return():
    n = RED + 40
    a = _f32(np.ones(n))
    out = np.zeros(2, np.float32)
    early_return_sum[2, RED](a, out, n)
    return out, np.array([RED, 40], np.float32)


def run_fused_partial():
    n = N1 + 40
    a = _f32(np.arange(n) % 9)
    out = np.zeros(n, np.float32)
    fused_partial_stage[2, N1](a, out, n)
    p = np.concatenate([[0.0], a, [0.0]])
    return out, (p[:-2] + p[1:-1] + p[2:]).astype(np.float32)


def run_uninit_shared():
    a = _f32(np.arange(N1) + 1)
    out = np.zeros(N1, np.float32)
    uninit_shared[1, N1](a, out)
    return out, a


def run_uninit_local():
    a = _f32(np.arange(32) + 1)
    out = np.zeros(32, np.float32)
    uninit_local[1, 32](a, out)
    return out, a * 3


def run_global_shape():
    a = _f32(np.arange(T * T).reshape(T, T))
    out = np.zeros((T, T), np.float32)
    global_shape[1, (T, T)](a, out)
    return out, a.T.copy()


def run_clean_tile():
    h, w = 20, 24
    a = _f32(np.arange(h * w).reshape(h, w))
    out = np.zeros((w, h), np.float32)
    clean_tile_transpose[(2, 2), (TILE, TILE)](a, out, h, w)
    return out, a.T.copy()


def run_clean_reduce():
    n = RED + 40
    a = _f32(np.arange(n) % 3)
    out = np.zeros(2, np.float32)
    clean_reduce[2, RED](a, out, n)
    return out, np.array([a[:RED].sum(), a[RED:].sum()], np.float32)


def run_clean_histogram():
    a = _f32(np.arange(64) % 11)
    out = np.zeros(8, np.float32)
    clean_histogram[2, 32](a, out)
    return out, np.bincount(a.astype(int) % 8, minlength=8).astype(np.float32)


#: name -> (launch, expected sanitizer class or None, marker of the line it must name,
#:          CUDA kernel name)
CASES = {
    "neg_shared_index": (run_neg_shared, "out-of-bounds", "neg_shared", "neg_shared_index"),
    "global_oob": (run_global_oob, "out-of-bounds", "global_oob", "global_oob"),
    "tile_missing_barrier": (run_tile_missing_barrier, "shared-race", "tile_read", "tile_missing_barrier"),
    "warp_reduce_no_barrier": (run_warp_reduce, "shared-race", "warp_race", "warp_reduce_no_barrier"),
    "early_return_sum": (run_early_return, "barrier-divergence", "early_return", "early_return_sum"),
    "fused_partial_stage": (run_fused_partial, "barrier-divergence", "fused_barrier", "fused_partial_stage"),
    "uninit_shared": (run_uninit_shared, "uninitialized-read", "uninit", "uninit_shared"),
    "uninit_local": (run_uninit_local, "uninitialized-read", "uninit_local", "uninit_local"),
    "global_shape": (run_global_shape, None, "global_shape", "global_shape"),
    "clean_tile": (run_clean_tile, None, None, "clean_tile_transpose"),
    "clean_reduce": (run_clean_reduce, None, None, "clean_reduce"),
    "clean_histogram": (run_clean_histogram, None, None, "clean_histogram"),
}


def marker_line(marker: str) -> int:
    """1-based line number of the ``# BUG:<marker>`` comment in this file."""
    import inspect
    src = inspect.getsource(__import__(__name__, fromlist=["_"])).splitlines()
    tag = f"# BUG:{marker}"
    for n, line in enumerate(src, 1):
        if tag in line and (line.split(tag, 1)[1][:1] in ("", " ")):
            return n
    raise KeyError(marker)
