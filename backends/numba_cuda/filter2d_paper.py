"""filter2d, 3x3 uint8, paper-faithful integer accumulator: the 33 kernels of seed 000
(Özer & Demirci, "Konvolüsyon İşlemi Üzerinde GPU Eniyileme Yöntemlerinin Etkisi").

What every kernel computes (the meaning of the paper's listings, Algorithms 1-3 and §2.4.5):
``int acc = 0``; for the 9 taps, kernel row outer, column inner, ``acc = (int)((float)acc +
w*(float)x)`` in float32 without FMA; then ``acc >> shift`` (the paper: ``>> 4``) and a C wrap
cast to ``unsigned char``.  Only the interior (pixels whose 3x3 window lies inside the image) is
written.

Memory kinds (Çizelge 1): ``GM`` weights in global memory; ``CM`` weights in constant memory
(one compiled kernel per weight matrix: ``cuda.const.array_like`` needs the values at compile
time); ``SM`` the block's input tile plus a 1-pixel halo (corners too) staged in shared memory,
weights in global memory.  ``_CF{k}``: a thread computes k consecutive outputs along x, sliding
the 3x3 frame in registers (one new column per output), weights loaded once.  ``_Vec``: the k
output bytes are stored as 32-bit words (16-bit for CF=2, as the paper's halved STG count for
CF=2 shows) wherever a word is aligned and lies wholly inside the thread's interior outputs,
bytes elsewhere (row start/end, unaligned heads and tails; rows start at ``y*W`` which is rarely
a multiple of 4, and the interior starts at x=1).

Deviations from the printed listings (bugs, not meaning): Algorithm 2 loads no halo corners and
hard-codes a 32x32 block; Algorithm 3 never resets ``new_val`` between outputs, skips the first
column block (``ty > 0`` with ``ty = 2*thread``), writes the second output unshifted and tests
``ty`` instead of ``_ty`` against the right edge.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, to_device_poisoned

cuda = None  # numba.cuda, bound lazily (the simulator swaps module globals that name it)

ORIGIN = "seeds/000_4bc22224e0c2d458.txt"
_SECTIONS = {"GM": "§2.4.1 Algoritma 1 (temel çekirdek)", "CM": "§2.4.2 sabit bellek",
             "SM": "§2.4.3 Algoritma 2 (paylaşımlı bellek)"}
CFS = (2, 4, 8, 12, 16)

SUPPORTS = {"dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",),
            "flip": (False,), "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap",),
            "rounding": ("trunc",), "out_dtype": (None,), "h": Range(3), "w": Range(3)}


@functools.lru_cache(maxsize=None)
def _kernel(mem: str, cf: int, vec: bool, bx: int, by: int, wkey: bytes | None):
    global cuda
    cuda = kit.cuda()
    from numba import float32, int32, uint8, uint32
    fmul, fadd, f2i, _, _ = kit.float_ops()
    MEM = {"GM": 0, "CM": 1, "SM": 2}[mem]
    CF, BX, BY = cf, bx, by
    VEC = bool(vec)
    VW = 2 if cf == 2 else 4
    TH, TW = (by + 2, bx * cf + 2) if MEM == 2 else (1, 1)
    NT = bx * by
    WC = (np.frombuffer(wkey, np.float32).copy() if wkey is not None
          else np.zeros(9, np.float32))

    @cuda.jit(device=True)
    def px(img, tile, r, c, W, y0, x0):
        if MEM == 2:
            return tile[r - y0, c - x0]
        if c < 0 or c >= W:
            return uint8(0)
        return img[r * W + c]

    @cuda.jit(device=True)
    def tap(acc, w, x):
        return f2i(fadd(float32(acc), fmul(w, float32(x))))

    @cuda.jit
    def kern(img, out8, outv, wg, H, W, shift):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        r = cuda.blockIdx.y * BY + ty
        c0 = (cuda.blockIdx.x * BX + tx) * CF
        y0 = cuda.blockIdx.y * BY - 1
        x0 = cuda.blockIdx.x * BX * CF - 1
        tile = cuda.shared.array((TH, TW), uint8)
        if MEM == 2:
            i = ty * BX + tx
            while i < TH * TW:
                yy = y0 + i // TW
                xx = x0 + i % TW
                v = uint8(0)
                if yy >= 0 and yy < H and xx >= 0 and xx < W:
                    v = img[yy * W + xx]
                tile[i // TW, i % TW] = v
                i += NT
            cuda.syncthreads()
        if r < 1 or r >= H - 1 or c0 >= W - 1:
            return
        wc = cuda.const.array_like(WC)
        if MEM == 1:
            w0, w1, w2, w3, w4, w5, w6, w7, w8 = wc[0], wc[1], wc[2], wc[3], wc[4], wc[5], wc[6], wc[7], wc[8]
        else:
            w0, w1, w2, w3, w4, w5, w6, w7, w8 = wg[0], wg[1], wg[2], wg[3], wg[4], wg[5], wg[6], wg[7], wg[8]
        vals = cuda.local.array(CF, uint8)
        # frame columns: a = c-1, b = c, d = c+1; rows 0,1,2 = r-1, r, r+1
        a0 = px(img, tile, r - 1, c0 - 1, W, y0, x0)
        a1 = px(img, tile, r, c0 - 1, W, y0, x0)
        a2 = px(img, tile, r + 1, c0 - 1, W, y0, x0)
        b0 = px(img, tile, r - 1, c0, W, y0, x0)
        b1 = px(img, tile, r, c0, W, y0, x0)
        b2 = px(img, tile, r + 1, c0, W, y0, x0)
        d0 = px(img, tile, r - 1, c0 + 1, W, y0, x0)
        d1 = px(img, tile, r, c0 + 1, W, y0, x0)
        d2 = px(img, tile, r + 1, c0 + 1, W, y0, x0)
        for j in range(CF):
            c = c0 + j
            if j > 0:
                a0, a1, a2 = b0, b1, b2
                b0, b1, b2 = d0, d1, d2
                d0 = px(img, tile, r - 1, c + 1, W, y0, x0)
                d1 = px(img, tile, r, c + 1, W, y0, x0)
                d2 = px(img, tile, r + 1, c + 1, W, y0, x0)
            acc = int32(0)
            acc = tap(acc, w0, a0)
            acc = tap(acc, w1, b0)
            acc = tap(acc, w2, d0)
            acc = tap(acc, w3, a1)
            acc = tap(acc, w4, b1)
            acc = tap(acc, w5, d1)
            acc = tap(acc, w6, a2)
            acc = tap(acc, w7, b2)
            acc = tap(acc, w8, d2)
            vals[j] = uint8((acc >> shift) & 0xFF)
        base = r * W
        j = 0
        while j < CF:
            c = c0 + j
            if c >= 1 and c <= W - 2:
                a = base + c
                if VEC and a % VW == 0 and j + VW <= CF and c + VW - 1 <= W - 2:
                    word = uint32(0)
                    for q in range(VW):
                        word = word | (uint32(vals[j + q]) << uint32(8 * q))
                    outv[a // VW] = word
                    j += VW
                    continue
                out8[a] = vals[j]
            j += 1

    return kern


def _make_run(mem, cf, vec):
    def run(problem, out, bx=32, by=8):
        cuda = kit.cuda()
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
        shift = int(problem.option("shift"))
        H, W = img.shape
        k = _kernel(mem, cf, vec, bx, by, w.tobytes() if mem == "CM" else None)
        d_out, n = to_device_poisoned(out, pad_to=4)
        if vec:
            d_v = d_out.view(np.uint16 if cf == 2 else np.uint32)
        else:
            d_v = d_out
        d_img = cuda.to_device(img.reshape(-1))
        d_w = cuda.to_device(w)
        grid = (cdiv(cdiv(W, cf), bx), cdiv(H, by))
        launch(k[grid, (bx, by)], d_img, d_out, d_v, d_w, H, W, shift)
        cuda.synchronize()
        return from_device(d_out, n, out)
    return run


def _constraint(mem, cf):
    """The device limits: bx*by threads, a grid of (W/cf/bx, H/by) blocks, SM's (by+2) x (bx*cf+2)
    byte tile, CM's 9 float weights, image + output (+ padding to a word) in device memory."""
    def check(problem, params):
        bx, by = params.get("bx", 32), params.get("by", 8)
        H, W = problem.dims["h"], problem.dims["w"]
        return fits(problem, threads=bx * by, grid=(cdiv(cdiv(W, cf), bx), cdiv(H, by)),
                    shared=(by + 2) * (bx * cf + 2) if mem == "SM" else 1,   # the kernel's 1x1 tile otherwise
                    const=36 if mem == "CM" else 0,
                    device_bytes=io_bytes(problem, H * W + 4, 1))
    return check


def variants():
    available = kit.reason
    out = []
    table = [(m, 1, False) for m in ("GM", "CM", "SM")]
    table += [(m, k, False) for m in ("GM", "CM", "SM") for k in CFS]
    table += [(m, k, True) for m in ("GM", "CM", "SM") for k in CFS]
    for mem, cf, vec in table:
        name = mem + (f"_CF{cf}" if cf > 1 else "") + ("_Vec" if vec else "")
        sec = _SECTIONS[mem] + (" + §2.4.4 Algoritma 3 (kalınlaştırma)" if cf > 1 else "") + \
            (" + §2.4.5 vektörleştirme" if vec else "")
        doc = (f"3x3 uint8 filter, weights in {'constant' if mem == 'CM' else 'global'} memory"
               + (", input tile + 1-px halo in shared memory" if mem == "SM" else "")
               + (f", {cf} consecutive outputs per thread (sliding 3x3 register frame)" if cf > 1 else "")
               + (f", outputs stored as {'16' if cf == 2 else '32'}-bit words where aligned" if vec else "")
               + "; acc=(int)((float)acc+w*(float)x) per tap (row-major, no FMA), acc>>shift, wrap to uint8; "
               "interior only")
        out.append(Variant(
            op="filter2d", backend="numba_cuda", name=name, run=_make_run(mem, cf, vec),
            supports=dict(SUPPORTS),
            params=(Param("bx", (4, 8, 16, 32), 32), Param("by", (2, 4, 8), 8)),
            available=available, writes="interior", constraint=_constraint(mem, cf),
            origin=f"{ORIGIN} {sec}", doc=doc))
    return out
