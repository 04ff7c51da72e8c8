"""sobel: the Sobel kernels of seed 002 (Kim, Kim, Woo, Ihm 2010, §4 and appendix codes 1-5).

Every variant converts colour to gray in the kernel (float32 ``(0.299R + 0.587G) + 0.114B``, no
FMA), keeps the Sobel masks in constant memory, accumulates Gx and Gy in float32 in the spec's tap
order, and writes ``|Gx|+|Gy|`` (or ``sqrt(Gx²+Gy²)``) truncated and saturated to uint8, for the
valid interior only (``writes="interior"``; the border keeps the caller's values).

``gmem`` (code 1) reads the 3x3 neighbourhood from global memory; ``smem_if`` (method I, code 2)
stages the block plus a 1-pixel halo in shared memory, edge threads load the edges and corner
threads the corners (the listing forgets the bottom-right corner: loaded here); ``smem_4copy``
(method II, code 3) fills the halo tile with four block-sized shifted copies, no branches;
``smem_linear`` (method III, code 4) maps the linear thread index onto the halo tile (div/mod),
repeating until it is covered; ``smem_rows2`` (method IV, code 5) uses blocks of height 2, a
shared tile (rows+2) x bx filled two rows per copy, each block producing ``rows`` output rows of
``bx-2`` columns (the last two thread columns compute values that are thrown away);
``unrolled`` (§4.3.4) is ``gmem`` with the loops unrolled by hand.  As in the OpenCL twins
(``sobel.cl``), each thread reads its 3x3 gray window once (gmem/unrolled from global memory,
the shared-memory methods from the tile) and the taps' positions are fixed at compile time (the
weights still come from the constant-memory mask), so ``gmem`` and ``unrolled`` compile alike.  The paper's fastest
version reads through the texture unit; numba-cuda exposes neither textures nor ``__ldg`` (no
``cuda.ldg``, on the GPU or in the simulator), so there is no read-only-cache variant.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, to_device_poisoned

cuda = None

ORIGIN = "seeds/002_bac98b268d2530e5.txt"
_SEC = {"gmem": "§4.2.1, 부록 코드 1", "smem_if": "§4.2.1 방법 I, 부록 코드 2",
        "smem_4copy": "§4.2.2 방법 II, 부록 코드 3", "smem_linear": "§4.2.3 방법 III, 부록 코드 4",
        "smem_rows2": "§4.2.4 방법 IV, 부록 코드 5", "unrolled": "§4.3.1 상수 메모리 + §4.3.4 반복문 제거"}
_METHOD = {"gmem": 0, "smem_if": 1, "smem_4copy": 2, "smem_linear": 3, "smem_rows2": 4, "unrolled": 5}

SUPPORTS = {"dtype": ("uint8", "float32"), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate",), "rounding": ("trunc",)}

# Gx taps (i, j, w) in spec order; Gy uses (j, i, w)
_GX = np.array([[0, 0, -1], [0, 2, 1], [1, 0, -2], [1, 2, 2], [2, 0, -1], [2, 2, 1]], np.float32)


@functools.lru_cache(maxsize=None)
def _kernel(method: int, nch: int, l2: bool, bx: int, by: int, rows: int):
    global cuda
    cuda = kit.cuda()
    from numba import float32, uint8, uint64
    import math
    fmul, fadd, _, _, _ = kit.float_ops()
    M, NCH, L2, BX, BY, ROWS = method, nch, bool(l2), bx, by, rows
    SMEM = method in (1, 2, 3, 4)
    if method == 4:
        TH, TW = rows + 2, bx
    elif SMEM:
        TH, TW = by + 2, bx + 2
    else:
        TH, TW = 1, 1
    NT = bx * by
    GXC = _GX.copy()
    C0, C1, C2 = np.float32(0.299), np.float32(0.587), np.float32(0.114)
    # every subscript is a uint64 (numba gives a signed index a negative-index wraparound, a
    # 64-bit compare and select per subscript); uint64 op int64 is float64 in numba, so each
    # operand of an index expression is unsigned: these constants and uint64() casts
    U0, U1, U2, UN = np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(max(nch, 1))
    UBX, UBY, UTW, UNT, UTH = (np.uint64(v) for v in (bx, by, TW, NT, TH))
    UBX2 = np.uint64(max(bx - 2, 0))

    @cuda.jit(device=True)
    def gray_at(img, b):
        """gray of pixel b = r*W + c (uint64, inside the image)"""
        if NCH == 0:
            return float32(img[b])
        q = b * UN
        return fadd(fadd(fmul(C0, float32(img[q])), fmul(C1, float32(img[q + U1]))),
                    fmul(C2, float32(img[q + U2])))

    @cuda.jit(device=True)
    def gray(img, r, c, H, W):
        """gray of (r, c), 0 outside the image: the signed test first, then the unsigned index"""
        if r < 0 or r >= H or c < 0 or c >= W:
            return float32(0)
        return gray_at(img, uint64(r) * uint64(W) + uint64(c))

    @cuda.jit(device=True)
    def finish(gx, gy):
        if L2:
            m = float32(math.sqrt(fadd(fmul(gx, gx), fmul(gy, gy))))
        else:
            m = fadd(abs(gx), abs(gy))
        if not (m == m):
            return uint8(0)
        if m >= float32(255):
            return uint8(255)
        return uint8(int(m))

    @cuda.jit(device=True)
    def mag(kc, p00, p01, p02, p10, p12, p20, p21, p22):
        """the window's magnitude, masks from constant memory, taps in the spec's order
        (Gx row-major, Gy column-major, zero taps skipped)"""
        gx = float32(0) + kc[0, 2] * p00
        gx = gx + kc[1, 2] * p02
        gx = gx + kc[2, 2] * p10
        gx = gx + kc[3, 2] * p12
        gx = gx + kc[4, 2] * p20
        gx = gx + kc[5, 2] * p22
        gy = float32(0) + kc[0, 2] * p00
        gy = gy + kc[1, 2] * p20
        gy = gy + kc[2, 2] * p01
        gy = gy + kc[3, 2] * p21
        gy = gy + kc[4, 2] * p02
        gy = gy + kc[5, 2] * p22
        return finish(gx, gy)

    @cuda.jit(device=True)
    def mag_tile(kc, tile, i0, j0):
        """the magnitude of the 3x3 window at tile row i0, column j0 (uint64), read once"""
        i1 = i0 + U1
        i2 = i0 + U2
        j1 = j0 + U1
        j2 = j0 + U2
        return mag(kc, tile[i0, j0], tile[i0, j1], tile[i0, j2], tile[i1, j0], tile[i1, j2],
                   tile[i2, j0], tile[i2, j1], tile[i2, j2])

    @cuda.jit
    def kern(img, out, H, W):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        utx = uint64(tx)
        uty = uint64(ty)
        Wu = uint64(W)
        tile = cuda.shared.array((TH, TW), float32)
        kc = cuda.const.array_like(GXC)
        if M == 4:
            # method IV: block bx x 2, tile (ROWS+2) x bx, ROWS output rows of bx-2 columns
            c = cuda.blockIdx.x * (BX - 2) + tx          # output column of this thread
            oy = cuda.blockIdx.y * ROWS                   # first output row of the block
            for k in range((ROWS + 2) // 2):
                tr = ty + 2 * k
                tile[uty + uint64(2 * k), utx] = gray(img, oy - 1 + tr, c - 1, H, W)
            cuda.syncthreads()
            for k in range(ROWS // 2):
                rr = ty + 2 * k
                r = oy + rr
                urr = uty + uint64(2 * k)
                # tile row rr+i, column tx+j holds gray(r-1+i, c-1+j); the last two thread
                # columns compute a value that is thrown away, from the tile columns they have
                p00 = tile[urr, utx]
                p10 = tile[urr + U1, utx]
                p20 = tile[urr + U2, utx]
                p01 = float32(0)
                p21 = float32(0)
                p02 = float32(0)
                p12 = float32(0)
                p22 = float32(0)
                if tx + 1 < BX:
                    p01 = tile[urr, utx + U1]
                    p21 = tile[urr + U2, utx + U1]
                if tx + 2 < BX:
                    p02 = tile[urr, utx + U2]
                    p12 = tile[urr + U1, utx + U2]
                    p22 = tile[urr + U2, utx + U2]
                v = mag(kc, p00, p01, p02, p10, p12, p20, p21, p22)
                if tx < BX - 2 and r >= 1 and r < H - 1 and c >= 1 and c < W - 1:
                    out[uint64(r) * Wu + uint64(c)] = v
            return
        c = cuda.blockIdx.x * BX + tx
        r = cuda.blockIdx.y * BY + ty
        if M == 1:
            tile[uty + U1, utx + U1] = gray(img, r, c, H, W)
            if tx == 0:
                tile[uty + U1, U0] = gray(img, r, c - 1, H, W)
            if tx == BX - 1:
                tile[uty + U1, UBX + U1] = gray(img, r, c + 1, H, W)
            if ty == 0:
                tile[U0, utx + U1] = gray(img, r - 1, c, H, W)
            if ty == BY - 1:
                tile[UBY + U1, utx + U1] = gray(img, r + 1, c, H, W)
            if tx == 0 and ty == 0:
                tile[U0, U0] = gray(img, r - 1, c - 1, H, W)
            if tx == BX - 1 and ty == 0:
                tile[U0, UBX + U1] = gray(img, r - 1, c + 1, H, W)
            if tx == 0 and ty == BY - 1:
                tile[UBY + U1, U0] = gray(img, r + 1, c - 1, H, W)
            if tx == BX - 1 and ty == BY - 1:
                tile[UBY + U1, UBX + U1] = gray(img, r + 1, c + 1, H, W)
            cuda.syncthreads()
        elif M == 2:
            # the four block-sized copies overlap (by 2 rows/columns); a barrier after each one
            # keeps two threads from writing the same element in one phase (a write-write race
            # the refconv sanitizer reported with 2x4 blocks)
            tile[uty, utx] = gray(img, r - 1, c - 1, H, W)
            cuda.syncthreads()
            tile[uty, utx + U2] = gray(img, r - 1, c + 1, H, W)
            cuda.syncthreads()
            tile[uty + U2, utx] = gray(img, r + 1, c - 1, H, W)
            cuda.syncthreads()
            tile[uty + U2, utx + U2] = gray(img, r + 1, c + 1, H, W)
            cuda.syncthreads()
        elif M == 3:
            i = uty * UBX + utx
            r0 = cuda.blockIdx.y * BY - 1
            q0 = cuda.blockIdx.x * BX - 1
            while i < UTH * UTW:
                ti = i // UTW
                tj = i % UTW
                tile[ti, tj] = gray(img, r0 + int(ti), q0 + int(tj), H, W)
                i += UNT
            cuda.syncthreads()
        if r < 1 or r >= H - 1 or c < 1 or c >= W - 1:
            return
        if SMEM:
            v = mag_tile(kc, tile, uty, utx)
        else:
            # gmem and unrolled: the 3x3 window read once, straight from global memory (the
            # interior test above keeps every tap inside the image)
            b0 = (uint64(r) - U1) * Wu + (uint64(c) - U1)
            b1 = b0 + Wu
            b2 = b1 + Wu
            v = mag(kc, gray_at(img, b0), gray_at(img, b0 + U1), gray_at(img, b0 + U2),
                    gray_at(img, b1), gray_at(img, b1 + U2),
                    gray_at(img, b2), gray_at(img, b2 + U1), gray_at(img, b2 + U2))
        out[uint64(r) * Wu + uint64(c)] = v

    return kern


def _make_run(name):
    method = _METHOD[name]

    def run(problem, out, bx=16, by=16, rows=4):
        cuda_ = kit.cuda()
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape[:2]
        nch = 0 if img.ndim == 2 else img.shape[2]
        l2 = problem.option("magnitude") == "l2"
        if method == 4:
            by_ = 2
            k = _kernel(method, nch, l2, bx, 2, rows)
            grid = (cdiv(W, bx - 2), cdiv(H, rows))
        else:
            by_ = by
            k = _kernel(method, nch, l2, bx, by, 0)
            grid = (cdiv(W, bx), cdiv(H, by))
        d_out, n = to_device_poisoned(out)
        d_img = cuda_.to_device(img.reshape(-1))
        launch(k[grid, (bx, by_)], d_img, d_out, H, W)
        cuda_.synchronize()
        return from_device(d_out, n, out)
    return run


def _fits(name):
    """The device limits: the block's threads, the grid, the float32 gray tile in shared memory
    (methods I-IV), the image and the uint8 output in device memory."""
    method = _METHOD[name]

    def check(problem, params):
        H, W = problem.dims["h"], problem.dims["w"]
        bx, by, rows = params.get("bx", 16), params.get("by", 16), params.get("rows", 4)
        if method == 4:
            threads, grid, tile = bx * 2, (cdiv(W, bx - 2), cdiv(H, rows)), (rows + 2) * bx
        else:
            threads, grid, tile = bx * by, (cdiv(W, bx), cdiv(H, by)), (by + 2) * (bx + 2) if method in (1, 2, 3) else 1
            # (1: the kernel's 1x1 tile of the methods without one)
        return fits(problem, threads=threads, grid=grid, shared=4 * tile, const=36,
                    device_bytes=io_bytes(problem, H * W, 1))
    return check


def variants():
    available = kit.reason
    out = []
    for name in ("gmem", "smem_if", "smem_4copy", "smem_linear", "smem_rows2", "unrolled"):
        if name == "smem_rows2":
            params = (Param("bx", (4, 8, 16, 32, 64, 128), 128), Param("rows", (2, 4, 6, 8), 4))
        else:
            params = (Param("bx", (2, 4, 8, 16, 32), 16), Param("by", (2, 4, 8, 16), 16))
        out.append(Variant(
            op="sobel", backend="numba_cuda", name=name, run=_make_run(name), supports=dict(SUPPORTS),
            params=params, available=available, writes="interior",
            constraint=_fits(name),
            origin=f"{ORIGIN} {_SEC[name]}",
            doc=f"Sobel |Gx|+|Gy| (or L2) of the in-kernel float32 gray image, masks in constant memory; {_SEC[name]}; "
                "uint8 out, trunc + saturate, interior only"))
    return out
