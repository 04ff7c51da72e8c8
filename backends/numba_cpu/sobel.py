"""sobel: the CPU form of seed 002's Sobel section: colour -> gray conversion, then the two 3x3
Sobel gradients and their magnitude, pixel by pixel.

* gray: a gray image is converted to the working type ``F`` (float64 for float64, float32
  otherwise); an RGB/RGBA uint8 image becomes the float32 gray ``(0.299f*R + 0.587f*G) + 0.114f*B``
  (alpha ignored, not rounded back to uint8);
* gradients: the six non-zero taps of Kx (and of Ky = Kx.T) in the spec's order, accumulated in
  ``F`` from +0; borders through the same numpy.pad index maps as ``filter2d``;
* magnitude: ``|Gx| + |Gy|`` (l1) or ``sqrt(Gx*Gx + Gy*Gy)`` (l2) in ``F``; then either a float
  output (round to nearest) or ``trunc | nearest-even`` and ``saturate | wrap`` to uint8.

Launch parameter ``row_block``: rows walked in blocks of that many rows (same result).
"""
from __future__ import annotations

import numpy as np

from refconv import Param, Variant

from . import NAME
from ._util import c_array, c_target, njit
from .filter2d import _cast_u8_float, index_map

#: (i, j, weight) of the non-zero Kx taps in spec order; Ky uses (j, i).
_GX_I = np.array([0, 0, 1, 1, 2, 2], np.int64)
_GX_J = np.array([0, 2, 0, 2, 0, 2], np.int64)
_GX_W = (-1.0, 1.0, -2.0, 2.0, -1.0, 1.0)


@njit
def _gray_rgb(img, g):
    """img (H, W, 3|4) uint8 -> g (H, W) float32: (0.299f*R + 0.587f*G) + 0.114f*B."""
    c0, c1, c2 = np.float32(0.299), np.float32(0.587), np.float32(0.114)
    for y in range(img.shape[0]):
        for x in range(img.shape[1]):
            r = np.float32(img[y, x, 0])
            gg = np.float32(img[y, x, 1])
            b = np.float32(img[y, x, 2])
            g[y, x] = (c0 * r + c1 * gg) + c2 * b
    return g


@njit
def _sobel(g, out, rmap, cmap, ti, tj, tw, l2, to_u8, nearest, wrap, row_block):
    """g (H, W) in the working type; tw the 6 tap weights in the working type; Gx tap t reads
    (ti[t], tj[t]) of the window, Gy tap t reads (tj[t], ti[t])."""
    OH, OW = out.shape
    zero = np.zeros(1, dtype=g.dtype)[0]          # +0 of the working type (ghost cells, acc start)
    for y0 in range(0, OH, row_block):
        for y in range(y0, min(y0 + row_block, OH)):
            for x in range(OW):
                gx = zero
                gy = zero
                for t in range(6):
                    sy = rmap[y + ti[t]]
                    sx = cmap[x + tj[t]]
                    p = g[sy, sx] if (sy >= 0 and sx >= 0) else zero
                    gx = gx + tw[t] * p
                for t in range(6):
                    sy = rmap[y + tj[t]]
                    sx = cmap[x + ti[t]]
                    p = g[sy, sx] if (sy >= 0 and sx >= 0) else zero
                    gy = gy + tw[t] * p
                if l2:
                    mag = np.sqrt(gx * gx + gy * gy)
                else:
                    mag = abs(gx) + abs(gy)
                if to_u8:
                    r = np.rint(mag) if nearest else np.trunc(mag)
                    out[y, x] = _cast_u8_float(r, wrap)
                else:
                    out[y, x] = mag
    return out


def run(problem, out, row_block=8):
    img = c_array(problem.inputs["image"])
    boundary = problem.option("boundary")
    magnitude = problem.option("magnitude")
    out_dtype = np.dtype(problem.option("out_dtype") or "uint8")      # None: uint8 (the spec)
    rounding, cast = problem.option("rounding"), problem.option("cast")
    work = np.float64 if img.dtype == np.float64 else np.float32
    if img.ndim == 3:
        g = _gray_rgb(img, np.empty(img.shape[:2], np.float32))
    else:
        g = img.astype(work)
    h, w = g.shape
    if boundary == "valid":
        oh, ow = max(h - 2, 0), max(w - 2, 0)
    else:
        oh, ow = h, w
    if tuple(out.shape) != (oh, ow) or out.dtype != out_dtype:
        raise ValueError(f"sobel: output buffer is {out.shape} {out.dtype}, expected {(oh, ow)} {out_dtype}")
    if out_dtype.kind not in "f" and out_dtype != np.uint8:
        raise ValueError(f"sobel/numba_cpu/direct: out_dtype {out_dtype} not supported (uint8 or float)")
    if out.size == 0:
        return out
    with c_target(out) as target:
        _sobel(g, target, index_map(h, 3, boundary), index_map(w, 3, boundary), _GX_I, _GX_J,
               np.array(_GX_W, dtype=work), magnitude == "l2", out_dtype == np.uint8,
               rounding == "nearest-even", cast == "wrap", int(row_block))
    return out


def variants():
    return [
        Variant(
            op="sobel", backend=NAME, name="direct", run=run,
            supports={"dtype": ("uint8", "float32"), "channels": (0, 3, 4),
                      "out_dtype": ("uint8", "float32")},
            params=(Param("row_block", (1, 3, 8), 8),),
            origin="seed 002, Sobel section (gray conversion + 3x3 gradients), serial CPU form",
            doc="gray = (0.299R + 0.587G) + 0.114B; Gx, Gy 3x3 Sobel; |Gx|+|Gy| or sqrt(Gx^2+Gy^2)",
        )
    ]
