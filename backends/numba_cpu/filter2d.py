"""filter2d: a straightforward CPU filter2d (pixel loop, taps i outer / j inner) covering the
whole spec: every boundary mode, flip, float32/float64 images, and for uint8 images both the
paper-faithful ``"int"`` accumulator and the ``"float32"``/``"float64"`` ones with shift,
rounding and cast.

Borders are handled with per-axis index maps built by ``numpy.pad`` on index vectors (padded
coordinate -> source coordinate, -1 for a zero ghost cell), so every boundary rule, including
pads wider than the image, is numpy.pad's by construction, and the compiled kernel takes the
boundary as data (one specialisation per dtype, not per mode).  Per pixel::

    float:  acc = +0 (work type); per tap  acc = acc + w[i,j] * work(x)       (no FMA)
            uint8 out: acc * 2**-shift, trunc | rint, saturate | wrap to uint8
    int:    acc = 0; per tap  acc = int32_rz(float32(acc) + w[i,j] * float32(x))
            then acc >> shift, saturate | wrap to uint8

Launch parameter ``row_block``: output rows are walked in blocks of that many rows (the CPU
analogue of a thread block's rows; same result).
"""
from __future__ import annotations

import numpy as np

from refconv import Param, Variant

from . import NAME
from ._util import c_array, c_target, njit

_NP_PAD = {"zero": "constant", "replicate": "edge", "reflect": "reflect", "wrap": "wrap"}
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def index_map(n: int, k: int, boundary: str) -> np.ndarray:
    """Source index for every padded coordinate along one axis (-1: zero ghost cell)."""
    if boundary == "valid":
        return np.arange(n, dtype=np.int64)
    before, after = k // 2, k - 1 - k // 2
    idx = np.arange(n, dtype=np.int64)
    if boundary == "zero":
        return np.pad(idx, (before, after), mode="constant", constant_values=-1)
    return np.pad(idx, (before, after), mode=_NP_PAD[boundary])


@njit
def _cast_u8_float(v, wrap):
    """An integer-valued float -> uint8 value (as int64): saturate (NaN -> 0) or wrap (C
    conversion to int64 saturating at the int64 limits, NaN -> 0, then modulo 256)."""
    if np.isnan(v):
        return 0
    if not wrap:
        if v <= 0.0:
            return 0
        if v >= 255.0:
            return 255
        return np.int64(v)
    if v >= 9.223372036854775807e18:
        return 255                      # int64 max & 0xFF
    if v < -9.223372036854775808e18:
        return 0                        # int64 min & 0xFF
    return np.int64(v) & 0xFF


@njit
def _filter2d_int(img, w, out, rmap, cmap, shift, wrap, row_block):
    """uint8 image, accumulator "int": img (C,H,W) uint8, w (KH,KW) float32, out (C,OH,OW) uint8."""
    C = img.shape[0]
    KH, KW = w.shape
    OH, OW = out.shape[1], out.shape[2]
    for c in range(C):
        for y0 in range(0, OH, row_block):
            for y in range(y0, min(y0 + row_block, OH)):
                for x in range(OW):
                    iacc = np.int64(0)
                    for i in range(KH):
                        sy = rmap[y + i]
                        for j in range(KW):
                            sx = cmap[x + j]
                            xv = np.float32(0.0)
                            if sy >= 0 and sx >= 0:
                                xv = np.float32(img[c, sy, sx])
                            v = np.float32(iacc) + w[i, j] * xv
                            if np.isnan(v):
                                iacc = np.int64(0)
                            elif v >= np.float32(2147483648.0):
                                iacc = np.int64(INT32_MAX)
                            elif v <= np.float32(-2147483648.0):
                                iacc = np.int64(INT32_MIN)
                            else:
                                iacc = np.int64(v)      # truncates toward zero
                    iacc = iacc >> shift                # arithmetic: floor division
                    if wrap:
                        out[c, y, x] = iacc & 0xFF
                    else:
                        out[c, y, x] = min(max(iacc, 0), 255)
    return out


@njit
def _filter2d_float(img, w, out, rmap, cmap, to_u8, shift, nearest, wrap, row_block):
    """Float accumulator in w's dtype: img (C,H,W) uint8/float, out (C,OH,OW) uint8 (then
    ``to_u8``: scale, round, cast) or the working float type."""
    C = img.shape[0]
    KH, KW = w.shape
    OH, OW = out.shape[1], out.shape[2]
    tmp = np.zeros(1, dtype=w.dtype)     # conversions to the working type go through a store
    zero = tmp[0]
    tmp[0] = 2.0 ** -shift
    scale = tmp[0]
    for c in range(C):
        for y0 in range(0, OH, row_block):
            for y in range(y0, min(y0 + row_block, OH)):
                for x in range(OW):
                    acc = zero
                    for i in range(KH):
                        sy = rmap[y + i]
                        for j in range(KW):
                            sx = cmap[x + j]
                            if sy >= 0 and sx >= 0:
                                tmp[0] = img[c, sy, sx]
                            else:
                                tmp[0] = 0
                            acc = acc + w[i, j] * tmp[0]
                    if to_u8:
                        if shift:
                            acc = acc * scale
                        r = np.rint(acc) if nearest else np.trunc(acc)
                        out[c, y, x] = _cast_u8_float(r, wrap)
                    else:
                        out[c, y, x] = acc
    return out


def run(problem, out, row_block=8):
    ins = problem.inputs
    img = c_array(ins["image"])
    boundary = problem.option("boundary")
    flip = bool(problem.option("flip"))
    shift = int(problem.option("shift"))
    rounding = problem.option("rounding")
    cast = problem.option("cast")
    if problem.option("out_dtype") is not None:
        raise ValueError("filter2d/numba_cpu/direct: out_dtype must be None (the image dtype)")
    is_u8 = img.dtype == np.uint8
    if is_u8:
        accumulator = problem.option("accumulator") or "float32"     # None: float32 (the spec)
        work = np.float64 if accumulator == "float64" else np.float32
    else:
        accumulator = img.dtype.name
        work = img.dtype.type
    w = np.asarray(ins["weights"]).astype(work)     # round to nearest, as the spec does
    if flip:
        w = w[::-1, ::-1]
    w = c_array(w)
    kh, kw = w.shape
    h, wd = img.shape[-2:]
    if boundary == "valid":
        oh, ow = max(h - kh + 1, 0), max(wd - kw + 1, 0)
    else:
        oh, ow = h, wd
    lead = img.shape[:-2]
    if tuple(out.shape) != tuple(lead) + (oh, ow):
        raise ValueError(f"filter2d: output buffer has shape {out.shape}, expected {tuple(lead) + (oh, ow)}")
    if out.size == 0:
        return out
    img3 = img.reshape((-1, h, wd))
    rmap, cmap = index_map(h, kh, boundary), index_map(wd, kw, boundary)
    with c_target(out) as target:
        out3 = target.reshape((-1, oh, ow))
        if accumulator == "int":
            _filter2d_int(img3, w, out3, rmap, cmap, shift, cast == "wrap", int(row_block))
        else:
            _filter2d_float(img3, w, out3, rmap, cmap, is_u8, shift, rounding == "nearest-even",
                            cast == "wrap", int(row_block))
    return out


def variants():
    return [
        Variant(
            op="filter2d", backend=NAME, name="direct", run=run,
            supports={"dtype": ("uint8", "float32", "float64"), "out_dtype": (None,)},
            params=(Param("row_block", (1, 3, 8), 8),),
            origin="seed 000 (3x3 uint8 CPU reference) generalised; spec refconv.specs.filter2d",
            doc="out[c,y,x] = cast(round(sum_{i,j} w[i,j] * in[c, y+i-KH//2, x+j-KW//2] >> shift))",
        )
    ]
