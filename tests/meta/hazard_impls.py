"""Deliberately hazardous numba-cuda kernels, one per hazard class of docs/sanitizer.md, each with
a correct "fixed twin" -- the same kernel with the hazard removed.  Used by
``tests/test_sanitizer_hazards.py`` (a plain simulated ``refconv check --profile ci`` fails each
hazard, naming its class, and passes each twin) and by ``lab/sweeps/catch_rates.py``.

Written as a third-party plugin would (plugin API 2, ``refconv.cuda`` for the mode, the poisoned
transfer and the launch; ``numba.cuda`` imported lazily through :func:`refconv.cuda.cuda`):

* ``HAZARDS``: ``{name: Variant}``, the kernels with the bug;
* ``FIXED``: ``{name: Variant}``, their twins, under the same names;
* ``CLASS``: ``{name: finding class}``, what the simulator sanitizer must name;
* ``backend``: a :class:`refconv.Backend` named ``hazards`` with all of them (variant names
  ``<name>`` and ``<name>_fixed``), for a ``refconv.backends`` entry point.

The hazards (the warp-synchronous reduction is in ``hazard_impls_warp.py``):

``early_return_barrier`` (``barrier-divergence``)
    conv2d, the cuconv fused kernel as printed in seed 004 (``fused_conv_kernel``): threads past
    the last output pixel ``return`` before the staging loop and its ``__syncthreads()``.  The
    built-in ``conv2d/numba_cuda/cuconv_fused`` is the fixed twin's code.
``missing_tile_barrier`` (``shared-race``)
    matvec, one thread per row, ``v`` staged tile by tile in shared memory; no barrier between the
    tile load and its use (nor before the next load).
``negative_shared_index`` (``out-of-bounds``)
    matvec, one block per row, the row's partial sums combined by an inclusive Hillis-Steele scan
    in shared memory whose ``s[t - off]`` lacks the ``t >= off`` guard: ``s[-1]`` wraps to the
    array's last element, as NumPy and numba on the GPU both do.  The last element -- the
    result -- comes out right, so only a bounds check sees it.
``global_oob`` (``out-of-bounds``)
    kron, one thread per element of C on a grid rounded up to whole blocks, with no
    ``if y < m*p and x < n*q`` guard.
"""
from __future__ import annotations

import functools

import numpy as np

import refconv.cuda as rc
from refconv import Backend, Param, Range, Variant

cuda = None   # a module global: the simulator swaps the kernel's global ``cuda`` (not a closure's)

#: the finding class the simulator sanitizer names for each hazard
CLASS = {"early_return_barrier": "barrier-divergence", "missing_tile_barrier": "shared-race",
         "negative_shared_index": "out-of-bounds", "global_oob": "out-of-bounds"}


def _numba():
    global cuda
    cuda = rc.cuda()
    from numba import float32, float64
    return float32, float64


# ----------------------------------------------------------------------------- conv2d: early return

@functools.lru_cache(maxsize=None)
def _fused(C: int, dtype: str, early_return: bool):
    f32, f64 = _numba()
    DT = f32 if dtype == "float32" else f64
    CC = C

    if early_return:
        @cuda.jit
        def fused_conv_kernel(x, f, bias, out, xoff, ooff, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx,
                              has_bias):
            m = cuda.blockIdx.y
            pix = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if pix >= Ho * Wo:
                return                     # BUG: these threads never reach the barriers below
            oy = pix // Wo
            ox = pix - oy * Wo
            sf = cuda.shared.array(CC, DT)
            acc = DT(0)
            for fy in range(R):
                for fx in range(S):
                    d = cuda.threadIdx.x
                    while d < CC:
                        sf[d] = f[((m * R + fy) * S + fx) * CC + d]
                        d += cuda.blockDim.x
                    cuda.syncthreads()
                    iy = oy * sy - py + fy * dy
                    ix = ox * sx - px + fx * dx
                    inside = iy >= 0 and iy < H and ix >= 0 and ix < W
                    for d2 in range(CC):
                        xv = x[xoff + (d2 * H + iy) * W + ix] if inside else DT(0)
                        acc += xv * sf[d2]
                    cuda.syncthreads()
            if has_bias:
                acc += bias[m]
            out[ooff + m * Ho * Wo + pix] = acc
        return fused_conv_kernel

    @cuda.jit
    def fused_conv_kernel_fixed(x, f, bias, out, xoff, ooff, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx,
                                has_bias):
        m = cuda.blockIdx.y
        pix = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        active = pix < Ho * Wo            # every thread stages and waits; in-range ones compute
        oy = pix // Wo
        ox = pix - oy * Wo
        sf = cuda.shared.array(CC, DT)
        acc = DT(0)
        for fy in range(R):
            for fx in range(S):
                d = cuda.threadIdx.x
                while d < CC:
                    sf[d] = f[((m * R + fy) * S + fx) * CC + d]
                    d += cuda.blockDim.x
                cuda.syncthreads()
                if active:
                    iy = oy * sy - py + fy * dy
                    ix = ox * sx - px + fx * dx
                    inside = iy >= 0 and iy < H and ix >= 0 and ix < W
                    for d2 in range(CC):
                        xv = x[xoff + (d2 * H + iy) * W + ix] if inside else DT(0)
                        acc += xv * sf[d2]
                cuda.syncthreads()
        if active:
            if has_bias:
                acc += bias[m]
            out[ooff + m * Ho * Wo + pix] = acc
    return fused_conv_kernel_fixed


def _conv2d_run(early_return: bool):
    def run(problem, out, threads=32):
        from refconv.backends.numba_cuda.conv2d import _prep
        c = rc.cuda()
        x, f, bias, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx) = _prep(problem)
        k = _fused(C, x.dtype.name, early_return)
        d_out, n = rc.to_device_poisoned(out)
        d_x, d_f, d_b = c.to_device(x.reshape(-1)), c.to_device(f), c.to_device(bias)
        for i in range(N):
            rc.launch(k[(rc.cdiv(Ho * Wo, threads), M), threads], d_x, d_f, d_b, d_out, i * C * H * W,
                      i * M * Ho * Wo, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx, has_bias)
        return rc.from_device(d_out, n, out)
    return run


#: small convolutions (the simulator runs one Python thread per CUDA thread)
CONV = {"dtype": ("float32", "float64"), "n": Range(1, 2), "c": Range(1, 4), "h": Range(1, 12),
        "w": Range(1, 12), "m": Range(1, 3), "r": Range(1, 3), "s": Range(1, 3), "groups": (1,),
        "bias": (0, 1), "stride": (1,), "padding": (0, 1), "dilation": (1,)}
CONV_THREADS = (Param("threads", (8, 32), 32),)


# ----------------------------------------------------------------------------- matvec: tile barrier

TILE = 8


@functools.lru_cache(maxsize=None)
def _tiled(dtype: str, barrier: bool):
    f32, f64 = _numba()
    DT = f32 if dtype == "float32" else f64

    if not barrier:
        @cuda.jit
        def matvec_tiled(m, v, out, R, C):
            s = cuda.shared.array(TILE, DT)
            t = cuda.threadIdx.x
            i = cuda.blockIdx.x * TILE + t
            acc = DT(0)
            for k0 in range(0, C, TILE):
                if k0 + t < C:
                    s[t] = v[k0 + t]
                # BUG: no cuda.syncthreads() here, nor before the next tile's load
                if i < R:
                    for j in range(min(TILE, C - k0)):
                        acc += m[i, k0 + j] * s[j]
            if i < R:
                out[i] = acc
        return matvec_tiled

    @cuda.jit
    def matvec_tiled_fixed(m, v, out, R, C):
        s = cuda.shared.array(TILE, DT)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * TILE + t
        acc = DT(0)
        for k0 in range(0, C, TILE):
            if k0 + t < C:
                s[t] = v[k0 + t]
            cuda.syncthreads()
            if i < R:
                for j in range(min(TILE, C - k0)):
                    acc += m[i, k0 + j] * s[j]
            cuda.syncthreads()
        if i < R:
            out[i] = acc
    return matvec_tiled_fixed


def _tiled_run(barrier: bool):
    def run(problem, out):
        c = rc.cuda()
        mat, vec = problem.inputs["m"], problem.inputs["v"]
        R, C = mat.shape
        d_out = rc.device_out(out)
        rc.launch(_tiled(mat.dtype.name, barrier)[rc.cdiv(R, TILE), TILE], c.to_device(mat), c.to_device(vec),
                  d_out, R, C)
        return rc.copy_back(d_out, out)
    return run


# ----------------------------------------------------------------------------- matvec: negative index

SCAN = 8


@functools.lru_cache(maxsize=None)
def _scan(dtype: str, guard: bool):
    f32, f64 = _numba()
    DT = f32 if dtype == "float32" else f64

    if not guard:
        @cuda.jit
        def matvec_scan(m, v, out, C):
            s = cuda.shared.array(SCAN, DT)
            t = cuda.threadIdx.x
            r = cuda.blockIdx.x
            acc = DT(0)
            for j in range(t, C, SCAN):
                acc += m[r, j] * v[j]
            s[t] = acc
            cuda.syncthreads()
            off = 1
            while off < SCAN:
                y = s[t - off]              # BUG: no `if t >= off`: s[-1] wraps to s[SCAN - 1]
                cuda.syncthreads()
                s[t] += y
                cuda.syncthreads()
                off *= 2
            if t == SCAN - 1:
                out[r] = s[t]
        return matvec_scan

    @cuda.jit
    def matvec_scan_fixed(m, v, out, C):
        s = cuda.shared.array(SCAN, DT)
        t = cuda.threadIdx.x
        r = cuda.blockIdx.x
        acc = DT(0)
        for j in range(t, C, SCAN):
            acc += m[r, j] * v[j]
        s[t] = acc
        cuda.syncthreads()
        off = 1
        while off < SCAN:
            y = DT(0)
            if t >= off:
                y = s[t - off]
            cuda.syncthreads()
            s[t] += y
            cuda.syncthreads()
            off *= 2
        if t == SCAN - 1:
            out[r] = s[t]
    return matvec_scan_fixed


def _scan_run(guard: bool):
    def run(problem, out):
        c = rc.cuda()
        mat, vec = problem.inputs["m"], problem.inputs["v"]
        R, C = mat.shape
        d_out = rc.device_out(out)
        rc.launch(_scan(mat.dtype.name, guard)[R, SCAN], c.to_device(mat), c.to_device(vec), d_out, C)
        return rc.copy_back(d_out, out)
    return run


MATVEC = {"dtype": ("float32", "float64"), "rows": Range(1, 24), "cols": Range(1, 24)}


# ----------------------------------------------------------------------------- kron: global OOB

@functools.lru_cache(maxsize=None)
def _kron(guard: bool):
    _numba()

    if not guard:
        @cuda.jit
        def kron_unguarded(a, b, c, m, n, p, q):
            x, y = cuda.grid(2)
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]   # BUG: no bounds guard
        return kron_unguarded

    @cuda.jit
    def kron_guarded(a, b, c, m, n, p, q):
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]
    return kron_guarded


def _kron_run(guard: bool):
    def run(problem, out):
        c = rc.cuda()
        a, b = problem.inputs["a"], problem.inputs["b"]
        (m, n), (p, q) = a.shape, b.shape
        d_c = rc.device_out(out)
        grid = (rc.cdiv(n * q, 8), rc.cdiv(m * p, 4))
        rc.launch(_kron(guard)[grid, (8, 4)], c.to_device(a), c.to_device(b), d_c, m, n, p, q)
        return rc.copy_back(d_c, out)
    return run


KRON = {"dtype": ("float64",), "m": Range(1, 6), "n": Range(1, 6), "p": Range(1, 6), "q": Range(1, 6)}


# ----------------------------------------------------------------------------- the variants

def _variant(op, name, run, supports, params=(), doc=""):
    return Variant(op=op, backend="hazards", name=name, run=run, supports=dict(supports), params=params,
                   available=rc.reason, doc=doc)


HAZARDS = {
    "early_return_barrier": _variant("conv2d", "early_return_barrier", _conv2d_run(True), CONV, CONV_THREADS,
                                     "cuconv fused_conv_kernel as printed: return before __syncthreads()"),
    "missing_tile_barrier": _variant("matvec", "missing_tile_barrier", _tiled_run(False), MATVEC,
                                     doc="v staged in shared tiles, no barrier after the tile load"),
    "negative_shared_index": _variant("matvec", "negative_shared_index", _scan_run(False), MATVEC,
                                      doc="scan over shared partial sums reads s[t - off] at t < off"),
    "global_oob": _variant("kron", "global_oob", _kron_run(False), KRON,
                           doc="one thread per element of C on a rounded-up grid, no bounds guard"),
}

FIXED = {
    "early_return_barrier": _variant("conv2d", "early_return_barrier_fixed", _conv2d_run(False), CONV,
                                     CONV_THREADS, "every thread reaches every barrier"),
    "missing_tile_barrier": _variant("matvec", "missing_tile_barrier_fixed", _tiled_run(True), MATVEC,
                                     doc="a barrier after the tile load and before the next"),
    "negative_shared_index": _variant("matvec", "negative_shared_index_fixed", _scan_run(True), MATVEC,
                                      doc="the scan reads s[t - off] only at t >= off"),
    "global_oob": _variant("kron", "global_oob_fixed", _kron_run(True), KRON, doc="bounds guard"),
}

backend = Backend(name="hazards", variants=lambda: [*HAZARDS.values(), *FIXED.values()], available=rc.reason,
                  preflight=rc.preflight, describe=rc.describe, target=rc.target)
