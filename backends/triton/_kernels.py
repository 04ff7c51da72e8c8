"""The built-in Triton kernels (imported at the first launch, after the mode is set: importing
this module imports triton).  Every kernel is a :func:`kit.jit` kernel without jitted helpers, so
the same source runs compiled and interpreted.  Conventions that let one spec judge both: float
to int conversions are saturated explicitly (the interpreter gives INT32_MIN where CUDA
saturates), ``sqrt_rn`` / ``div_rn`` where the spec rounds correctly, no FMA (the kit launches
with ``enable_fp_fusion=False`` on the GPU), ``tl.dot`` with ``input_precision="ieee"``."""
from __future__ import annotations

import triton.language as tl

from refconv.tooling.triton.kit import jit


@jit
def filter2d_tiled(img, wts, out, H, W, Ho, Wo, shift, scale, KH: tl.constexpr, KW: tl.constexpr,
                   BORDER: tl.constexpr, INTEGER: tl.constexpr, SAT: tl.constexpr,
                   BH: tl.constexpr, BW: tl.constexpr, CF: tl.constexpr, U8_FLOAT: tl.constexpr = False,
                   RNE: tl.constexpr = False):
    # BORDER: 0 valid, 1 zero ghost cells, 2 replicate.  Output tile rows ys, columns xs.
    # INTEGER: uint8 image, int accumulator; U8_FLOAT: uint8 image, float32 accumulator, then
    # * 2**-shift, rounding (RNE: half to even, else trunc) and the cast to uint8 (SAT or wrap).
    c = tl.program_id(2)
    ys = tl.program_id(0) * BH + tl.arange(0, BH)       # rows on grid axis 0 (up to 2**31 - 1 programs)
    oy = 0 if BORDER == 0 else KH // 2
    ox = 0 if BORDER == 0 else KW // 2
    src = img + c * H * W
    dst = out + c * Ho * Wo
    for t in range(CF):
        xs = (tl.program_id(1) * CF + t) * BW + tl.arange(0, BW)
        m = (ys[:, None] < Ho) & (xs[None, :] < Wo)
        if INTEGER:
            acc = tl.zeros((BH, BW), dtype=tl.int32)
        else:
            acc = tl.zeros((BH, BW), dtype=tl.float32)
        for i in range(KH):
            yy = ys[:, None] + i - oy
            for j in range(KW):
                xx = xs[None, :] + j - ox
                if BORDER == 2:
                    yc = tl.minimum(tl.maximum(yy, 0), H - 1)
                    xc = tl.minimum(tl.maximum(xx, 0), W - 1)
                    v = tl.load(src + yc * W + xc, mask=m, other=0).to(tl.float32)
                else:
                    inside = m & (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
                    v = tl.load(src + yy * W + xx, mask=inside, other=0).to(tl.float32)
                w = tl.load(wts + i * KW + j)
                if INTEGER:
                    f = acc.to(tl.float32) + w * v
                    # CUDA's cvt.rzi.s32.f32, written out: NaN -> 0, saturate to int32
                    f = tl.where(f != f, 0.0, f)
                    acc = tl.minimum(tl.maximum(f, -2147483648.0), 2147483520.0).to(tl.int32)
                    acc = tl.where(f >= 2147483648.0, 2147483647, acc)
                else:
                    acc = acc + w * v
        if INTEGER:
            s = acc >> shift
            if SAT:
                r = tl.minimum(tl.maximum(s, 0), 255).to(tl.uint8)
            else:
                r = (s & 255).to(tl.uint8)
            tl.store(dst + ys[:, None] * Wo + xs[None, :], r, mask=m)
        elif U8_FLOAT:
            f = acc * scale                                # scale = 2**-shift (float32, exact)
            t = tl.where(f < 0, -tl.floor(-f), tl.floor(f))
            if RNE:
                d = f - tl.floor(f)
                fl = tl.floor(f)
                half = fl * 0.5
                odd = half != tl.floor(half)
                f = tl.where(d > 0.5, fl + 1.0, tl.where(d < 0.5, fl, tl.where(odd, fl + 1.0, fl)))
            else:
                f = t
            f = tl.where(f != f, 0.0, f)                   # NaN -> 0 for both casts
            if SAT:
                r = tl.minimum(tl.maximum(f, 0.0), 255.0).to(tl.uint8)
            else:                                          # C's conversion to int64, then mod 256
                i = tl.minimum(tl.maximum(f, -9.223372036854775808e18), 9.2233714e18).to(tl.int64)
                i = tl.where(f >= 9.223372036854775808e18, 9223372036854775807, i)
                r = (i & 255).to(tl.uint8)
            tl.store(dst + ys[:, None] * Wo + xs[None, :], r, mask=m)
        else:
            tl.store(dst + ys[:, None] * Wo + xs[None, :], acc, mask=m)


@jit
def matvec_rows(m, v, out, R, C, BR: tl.constexpr, BC: tl.constexpr):
    # one program per block of BR rows; the columns in blocks of BC, the last one masked
    rows = (tl.program_id(0) * BR + tl.arange(0, BR)).to(tl.int64)   # R * C may pass 2**31
    acc = tl.zeros((BR,), dtype=out.dtype.element_ty)
    for c0 in range(0, C, BC):
        cols = c0 + tl.arange(0, BC)
        mk = (rows[:, None] < R) & (cols[None, :] < C)
        a = tl.load(m + rows[:, None] * C + cols[None, :], mask=mk, other=0)
        x = tl.load(v + cols, mask=cols < C, other=0)
        acc += tl.sum(a * x[None, :], axis=1)
    tl.store(out + rows, acc, mask=rows < R)


@jit
def kron_tiles(a, b, c, row0, nrows, n, p, q, BR: tl.constexpr, BC: tl.constexpr):
    # rows row0 .. row0+nrows of C = A (x) B into c (nrows x n*q): C[r, s] = A[r//p, s//q] * B[r%p, s%q]
    rl = (tl.program_id(0) * BR + tl.arange(0, BR)).to(tl.int64)     # the result may pass 2**31 elements
    cs = tl.program_id(1) * BC + tl.arange(0, BC)
    r = row0 + rl
    mk = (rl[:, None] < nrows) & (cs[None, :] < n * q)
    x = tl.load(a + (r // p)[:, None] * n + (cs // q)[None, :], mask=mk, other=0)
    y = tl.load(b + (r % p)[:, None] * q + (cs % q)[None, :], mask=mk, other=0)
    tl.store(c + rl[:, None] * (n * q) + cs[None, :], x * y, mask=mk)


@jit
def sobel_tiled(img, out, H, W, Ho, Wo, CH: tl.constexpr, L2: tl.constexpr, RNE: tl.constexpr,
                WRAP: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr):
    # valid boundary: out (H-2) x (W-2); gray from RGB(A) as (0.299f*R + 0.587f*G) + 0.114f*B
    ys = tl.program_id(0) * BH + tl.arange(0, BH)       # rows on grid axis 0 (up to 2**31 - 1 programs)
    xs = tl.program_id(1) * BW + tl.arange(0, BW)
    m = (ys[:, None] < Ho) & (xs[None, :] < Wo)
    gx = tl.zeros((BH, BW), dtype=tl.float32)
    gy = tl.zeros((BH, BW), dtype=tl.float32)
    # Gx = -p00 + p02 - 2*p10 + 2*p12 - p20 + p22 (rows outer), Gy = -p00 + p20 - 2*p01 + 2*p21
    # - p02 + p22 (columns outer): the spec's order; the zero taps are not evaluated
    # (plain names, no constexpr annotations, inside the unrolled loops: the compiler refuses to
    # re-assign an annotated constexpr, which the interpreter allows)
    for d in tl.static_range(2):                   # 0: Gx, rows outer; 1: Gy, columns outer
        for u in tl.static_range(3):               # the outer index
            for v in tl.static_range(0, 3, 2):     # the inner index: 0 or 2
                i = u * (1 - d) + v * d
                j = v * (1 - d) + u * d
                off = (ys[:, None] + i) * W + xs[None, :] + j
                if CH == 0:
                    p = tl.load(img + off, mask=m, other=0).to(tl.float32)
                else:
                    r = tl.load(img + off * CH, mask=m, other=0).to(tl.float32)
                    g = tl.load(img + off * CH + 1, mask=m, other=0).to(tl.float32)
                    b = tl.load(img + off * CH + 2, mask=m, other=0).to(tl.float32)
                    p = (0.299 * r + 0.587 * g) + 0.114 * b
                k = (v - 1) * (2 - (u - 1) * (u - 1))  # -1/+1 on the outer rows, -2/+2 on the middle
                if d == 0:
                    gx = gx + k * p
                else:
                    gy = gy + k * p
    if L2:
        mag = tl.sqrt_rn(gx * gx + gy * gy)
    else:
        mag = tl.abs(gx) + tl.abs(gy)
    if RNE:
        f = tl.floor(mag)
        d = mag - f
        half = f * 0.5
        odd = half != tl.floor(half)
        mag = tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(odd, f + 1.0, f)))
    else:
        mag = tl.floor(mag)                               # mag >= 0: trunc = floor
    if WRAP:
        res = (tl.minimum(mag, 2147483520.0).to(tl.int32) & 255).to(tl.uint8)
    else:
        res = tl.minimum(mag, 255.0).to(tl.uint8)
    tl.store(out + ys[:, None] * Wo + xs[None, :], res, mask=m)


@jit
def conv2d_direct(x, w, bias, out, C, H, W, M, Ho, Wo, sh, sw, ph, pw, dh, dw,
                  R: tl.constexpr, S: tl.constexpr, HAS_BIAS: tl.constexpr, BP: tl.constexpr):
    # program (pixel block, n*M + m): BP output pixels of one image and one filter
    nm = tl.program_id(1)
    n = nm // M
    mo = nm % M
    pix = tl.program_id(0) * BP + tl.arange(0, BP)
    pm = pix < Ho * Wo
    oy = pix // Wo
    ox = pix % Wo
    acc = tl.zeros((BP,), dtype=out.dtype.element_ty)
    for c in range(C):
        for r in range(R):
            iy = oy * sh - ph + r * dh
            for s in range(S):
                ix = ox * sw - pw + s * dw
                inside = pm & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
                xv = tl.load(x + ((n * C + c) * H + iy) * W + ix, mask=inside, other=0)
                wv = tl.load(w + ((mo * C + c) * R + r) * S + s)
                acc += xv * wv
    if HAS_BIAS:
        acc += tl.load(bias + mo)
    tl.store(out + nm * Ho * Wo + pix, acc, mask=pm)


@jit
def conv2d_igemm(x, w, bias, out, N, C, H, W, M, Ho, Wo, sh, sw, ph, pw, dh, dw, K,
                 R: tl.constexpr, S: tl.constexpr, HAS_BIAS: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PRECISION: tl.constexpr):
    # implicit GEMM: out[(n, y, x), m] = sum_k X[(n, y, x), k] * Wt[k, m], k = (c, r, s)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)      # output pixels over the batch
    cols = tl.program_id(1) * BN + tl.arange(0, BN)      # filters
    rm = rows < N * Ho * Wo
    cm = cols < M
    n = rows // (Ho * Wo)
    pix = rows % (Ho * Wo)
    oy = pix // Wo
    ox = pix % Wo
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        km = ks < K
        c = ks // (R * S)
        r = (ks // S) % R
        s = ks % S
        iy = oy[:, None] * sh - ph + r[None, :] * dh
        ix = ox[:, None] * sw - pw + s[None, :] * dw
        inside = rm[:, None] & km[None, :] & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
        a = tl.load(x + ((n[:, None] * C + c[None, :]) * H + iy) * W + ix, mask=inside, other=0.0)
        b = tl.load(w + cols[None, :] * K + ks[:, None], mask=km[:, None] & cm[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    if HAS_BIAS:
        acc += tl.load(bias + cols, mask=cm, other=0.0)[None, :]
    dst = out + (n[:, None] * M + cols[None, :]) * (Ho * Wo) + pix[:, None]
    tl.store(dst, acc, mask=rm[:, None] & cm[None, :])
