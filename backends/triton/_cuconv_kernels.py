"""The cuconv kernels of seed 004 (B.Sc. project on cuconv, §4.3) in Triton, imported at the first
launch (importing this module imports triton).

NCHW input ``x``; filters re-laid out on the host as depth rows ``f[M][R][S][C]`` (the study's
layout: the C-long row of one tap is contiguous).  For output pixel ``p = (oy, ox)`` of image
``n`` and filter ``m``, tap ``k = (fy, fx)`` reads the input column under it,
``iy = oy*sh - ph + fy*dh``, ``ix = ox*sw - pw + fx*dw`` (zero outside the image: a ghost cell
contributes ``w*0``, as the spec says), and the study's three stages are

* *flatten*: the C-long input column ``x[n, :, iy, ix]`` and the depth row ``f[m, fy, fx, :]``,
  loaded in blocks of ``BC`` channels (the last block masked);
* *multiply*: their elementwise products;
* *sum*: ``tl.sum`` over the channel block, then over the blocks and the taps (+ bias).

``cuconv_scalar_prods`` + ``cuconv_sum`` are the split form (``scalar_prods_kernel`` writes one
dot product per (pixel, image*filter, tap) into a partial buffer ``part[n][k][m][p]``;
``sum_kernel`` adds the R*S partials in tap order, + bias); ``cuconv_fused`` is
``fused_conv_kernel`` (all taps in one program; Triton stages the depth row in shared memory
itself).  Products and sums are plain float multiplies and adds (no ``tl.dot``, no FMA: the kit
launches with ``enable_fp_fusion=False`` on the GPU).  Offsets are 64-bit.
"""
from __future__ import annotations

import triton.language as tl

from refconv.tooling.triton.kit import jit


@jit
def cuconv_scalar_prods(x, f, bias, dst, C, H, W, M, Ho, Wo, R, S, sh, sw, ph, pw, dh, dw,
                        DIRECT: tl.constexpr, HAS_BIAS: tl.constexpr, BP: tl.constexpr, BC: tl.constexpr):
    # program (pixel block, n*M + m, tap k): BP dot products of length C.  DIRECT (1x1 filters):
    # the result (+ bias) goes straight to the output out[n][m][p]; else to part[n][k][m][p].
    nm = tl.program_id(1)
    k = tl.program_id(2)
    n = nm // M
    mo = nm % M
    fy = k // S
    fx = k % S
    pix = tl.program_id(0) * BP + tl.arange(0, BP)
    pm = pix < Ho * Wo
    iy = (pix // Wo) * sh - ph + fy * dh
    ix = (pix % Wo) * sw - pw + fx * dw
    inside = pm & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
    col = (iy * W + ix).to(tl.int64)
    frow = f + (mo * (R * S) + k).to(tl.int64) * C
    acc = tl.zeros((BP,), dtype=dst.dtype.element_ty)
    for c0 in range(0, C, BC):
        ds = c0 + tl.arange(0, BC)
        dm = ds < C
        xv = tl.load(x + (n * C + ds[None, :]).to(tl.int64) * (H * W) + col[:, None],
                     mask=inside[:, None] & dm[None, :], other=0)
        fv = tl.load(frow + ds, mask=dm, other=0)
        acc += tl.sum(xv * fv[None, :], axis=1)
    HoWo = Ho * Wo
    if DIRECT:
        if HAS_BIAS:
            acc += tl.load(bias + mo)
        tl.store(dst + nm.to(tl.int64) * HoWo + pix, acc, mask=pm)
    else:
        tl.store(dst + ((n * (R * S) + k) * M + mo).to(tl.int64) * HoWo + pix, acc, mask=pm)


@jit
def cuconv_sum(part, bias, out, M, K, Ho, Wo, HAS_BIAS: tl.constexpr, BP: tl.constexpr):
    # program (pixel block, n*M + m): out[n][m][p] = sum over k in order of part[n][k][m][p] (+ bias)
    nm = tl.program_id(1)
    n = nm // M
    mo = nm % M
    HoWo = Ho * Wo
    pix = tl.program_id(0) * BP + tl.arange(0, BP)
    pm = pix < HoWo
    acc = tl.zeros((BP,), dtype=out.dtype.element_ty)
    for k in range(K):
        acc += tl.load(part + ((n * K + k) * M + mo).to(tl.int64) * HoWo + pix, mask=pm, other=0)
    if HAS_BIAS:
        acc += tl.load(bias + mo)
    tl.store(out + nm.to(tl.int64) * HoWo + pix, acc, mask=pm)


@jit
def cuconv_fused(x, f, bias, out, C, H, W, M, Ho, Wo, R, S, sh, sw, ph, pw, dh, dw,
                 HAS_BIAS: tl.constexpr, BP: tl.constexpr, BC: tl.constexpr):
    # program (pixel block, n*M + m): every tap's C-long dot product, accumulated in registers
    nm = tl.program_id(1)
    n = nm // M
    mo = nm % M
    pix = tl.program_id(0) * BP + tl.arange(0, BP)
    pm = pix < Ho * Wo
    oy = pix // Wo
    ox = pix % Wo
    acc = tl.zeros((BP,), dtype=out.dtype.element_ty)
    for fy in range(R):
        iy = oy * sh - ph + fy * dh
        for fx in range(S):
            ix = ox * sw - pw + fx * dw
            inside = pm & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
            col = (iy * W + ix).to(tl.int64)
            frow = f + ((mo * R + fy) * S + fx).to(tl.int64) * C
            for c0 in range(0, C, BC):
                ds = c0 + tl.arange(0, BC)
                dm = ds < C
                xv = tl.load(x + (n * C + ds[None, :]).to(tl.int64) * (H * W) + col[:, None],
                             mask=inside[:, None] & dm[None, :], other=0)
                fv = tl.load(frow + ds, mask=dm, other=0)
                acc += tl.sum(xv * fv[None, :], axis=1)
    if HAS_BIAS:
        acc += tl.load(bias + mo)
    tl.store(out + nm.to(tl.int64) * (Ho * Wo) + pix, acc, mask=pm)
