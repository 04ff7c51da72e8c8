"""filter2d, float32, zero ghost cells, same-size output: the PMPP kernels of seed 001
(Programming Massively Parallel Processors' tiled 2-D convolution, as in the Korean blog notes).

Correlation (no flip; ``flip=True`` is handled by flipping the mask on the host) with anchor
``(KH//2, KW//2)``, masks up to 10x10 (odd and even, not necessarily square) in constant memory
(one compiled kernel per mask: ``cuda.const.array_like`` takes its values at compile time),
planar channels on grid z.  Each tap is a float32 product then a float32 sum in row-major tap
order, ghost cells multiplied as zeros (no FMA: libdevice ``__fmul_rn``/``__fadd_rn`` on the GPU),
so the result is the spec's bit for bit.

``basic``: one thread per output, reads the input from global memory.  ``tiled_halo``: the
block is the input tile ``(O_TILE+KH-1) x (O_TILE+KW-1)``; every thread loads one input element
(0 outside the image: ghost cells) into shared memory, then the ``O_TILE x O_TILE`` threads at the
top left compute and write.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, to_device_poisoned

cuda = None
ORIGIN = "seeds/001_66a62b72ac43a8c0.txt"
SUPPORTS = {"dtype": ("float32",), "c": Range(0), "h": Range(1), "w": Range(1),
            "kh": Range(1), "kw": Range(1), "boundary": ("zero",), "flip": (False, True),
            "accumulator": ("float32",), "shift": (0,), "rounding": ("trunc",), "cast": ("saturate",),
            "out_dtype": (None,)}


@functools.lru_cache(maxsize=None)
def _kernel(kind: str, kh: int, kw: int, o_tile: int, wkey: bytes):
    global cuda
    cuda = kit.cuda()
    from numba import float32
    fmul, fadd, _, _, _ = kit.float_ops()
    KH, KW, O = kh, kw, o_tile
    MASK = np.frombuffer(wkey, np.float32).copy()
    AY, AX = kh // 2, kw // 2
    TH, TW = (O + KH - 1, O + KW - 1) if kind == "tiled_halo" else (1, 1)

    if kind == "basic":
        @cuda.jit
        def k(img, out, H, W, CH):
            col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            ch = cuda.blockIdx.z
            mask = cuda.const.array_like(MASK)
            if row < H and col < W and ch < CH:
                acc = float32(0)
                for i in range(KH):
                    for j in range(KW):
                        y = row + i - AY
                        x = col + j - AX
                        v = float32(0)
                        if y >= 0 and y < H and x >= 0 and x < W:
                            v = img[(ch * H + y) * W + x]
                        acc = fadd(acc, fmul(mask[i * KW + j], v))
                out[(ch * H + row) * W + col] = acc
        return k

    @cuda.jit
    def k(img, out, H, W, CH):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        ch = cuda.blockIdx.z
        row_o = cuda.blockIdx.y * O + ty
        col_o = cuda.blockIdx.x * O + tx
        row_i = row_o - AY
        col_i = col_o - AX
        tile = cuda.shared.array((TH, TW), float32)
        mask = cuda.const.array_like(MASK)
        if row_i >= 0 and row_i < H and col_i >= 0 and col_i < W and ch < CH:
            tile[ty, tx] = img[(ch * H + row_i) * W + col_i]
        else:
            tile[ty, tx] = float32(0)
        cuda.syncthreads()
        if ty < O and tx < O and ch < CH:
            acc = float32(0)
            for i in range(KH):
                for j in range(KW):
                    acc = fadd(acc, fmul(mask[i * KW + j], tile[i + ty, j + tx]))
            if row_o < H and col_o < W:
                out[(ch * H + row_o) * W + col_o] = acc
    return k


def _make_run(kind):
    def run(problem, out, bx=16, by=16, o_tile=16):
        cuda_ = kit.cuda()
        img = np.ascontiguousarray(problem.inputs["image"], dtype=np.float32)
        w = np.asarray(problem.inputs["weights"], dtype=np.float32)
        if problem.option("flip"):
            w = w[::-1, ::-1]
        kh, kw = w.shape
        CH = 1 if img.ndim == 2 else img.shape[0]
        H, W = img.shape[-2:]
        k = _kernel(kind, kh, kw, o_tile if kind == "tiled_halo" else 0, np.ascontiguousarray(w).tobytes())
        d_out, n = to_device_poisoned(out)
        d_img = cuda_.to_device(img.reshape(-1))
        if kind == "basic":
            launch(k[(cdiv(W, bx), cdiv(H, by), CH), (bx, by, 1)], d_img, d_out, H, W, CH)
        else:
            launch(k[(cdiv(W, o_tile), cdiv(H, o_tile), CH), (o_tile + kw - 1, o_tile + kh - 1, 1)], d_img, d_out, H, W, CH)
        cuda_.synchronize()
        return from_device(d_out, n, out)
    return run


def _fits(kind):
    """The device limits: block threads, grid (x, y, planes on z), the tile in shared memory, the
    mask in constant memory, image + output in device memory."""
    def check(problem, params):
        d = problem.dims
        kh, kw, H, W, CH = d["kh"], d["kw"], d["h"], d["w"], max(d["c"], 1)
        mem = io_bytes(problem, CH * H * W, 4)
        if kind == "basic":
            bx, by = params.get("bx", 16), params.get("by", 16)
            return fits(problem, threads=bx * by, grid=(cdiv(W, bx), cdiv(H, by), CH), const=4 * kh * kw,
                        device_bytes=mem)
        o = params.get("o_tile", 16)
        tw, th = o + kw - 1, o + kh - 1
        return fits(problem, threads=tw * th, grid=(cdiv(W, o), cdiv(H, o), CH), shared=4 * tw * th,
                    const=4 * kh * kw, device_bytes=mem)
    return check


def variants():
    available = kit.reason
    return [
        Variant(op="filter2d", backend="numba_cuda", name="basic", run=_make_run("basic"), supports=dict(SUPPORTS),
                params=(Param("bx", (2, 4, 8, 16, 32), 16), Param("by", (2, 4, 8, 16), 16)),
                available=available, constraint=_fits("basic"), origin=f"{ORIGIN} (untiled 2-D convolution, mask in constant memory)",
                doc="float32 correlation, zero ghost cells, same size; one thread per output, mask in constant memory"),
        Variant(op="filter2d", backend="numba_cuda", name="tiled_halo", run=_make_run("tiled_halo"),
                supports=dict(SUPPORTS), params=(Param("o_tile", (1, 2, 4, 8, 16), 16),),
                available=available, constraint=_fits("tiled_halo"),
                origin=f"{ORIGIN} convolution2D_tiled (O_TILE_WIDTH, halo cells)",
                doc="block = input tile (O_TILE+KH-1)x(O_TILE+KW-1) in shared memory incl. halo/ghost cells; "
                    "O_TILE x O_TILE threads compute and write"),
    ]
