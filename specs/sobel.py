"""``sobel``: Sobel gradient magnitude of a gray or colour image."""
from __future__ import annotations

import numpy as np

from ._validate import FLOAT_DTYPES, INT_OUT_DTYPES, as_array, choice, dtype_arg
from .filter2d import BOUNDARIES, CASTS, ROUNDINGS, cast_to_int, out_hw, pad_image, round_values

#: Gx taps (i, j, weight) in spec order; Gy uses the transposed positions (j, i).
GX_TAPS = ((0, 0, -1.0), (0, 2, 1.0), (1, 0, -2.0), (1, 2, 2.0), (2, 0, -1.0), (2, 2, 1.0))
GY_TAPS = tuple((j, i, w) for i, j, w in GX_TAPS)
GRAY_WEIGHTS = (0.299, 0.587, 0.114)


def resolve(image, magnitude, boundary, out_dtype, cast, rounding):
    op = "sobel"
    image = as_array("image", image, ndims=(2, 3), dtypes=("uint8", "float32", "float64"), op=op)
    if image.ndim == 3:
        if image.shape[2] not in (3, 4):
            raise ValueError(f"{op}: image of shape {image.shape}: a colour image must be (H, W, 3) or "
                             f"(H, W, 4); accepted channel counts: 3, 4")
        if image.dtype != np.uint8:
            raise TypeError(f"{op}: a colour image has dtype {image.dtype.name}; accepted: uint8 "
                            f"(float images must be gray, (H, W))")
    if 0 in image.shape:
        raise ValueError(f"{op}: image must be non-empty, got shape {image.shape}")
    choice("magnitude", magnitude, ("l1", "l2"), op)
    choice("boundary", boundary, BOUNDARIES, op)
    choice("cast", cast, CASTS, op)
    choice("rounding", rounding, ROUNDINGS, op)
    # None means the default, uint8 (see sobel's docstring), never np.dtype(None) == float64
    out = np.dtype(np.uint8) if out_dtype is None else dtype_arg(
        "out_dtype", out_dtype, INT_OUT_DTYPES + FLOAT_DTYPES, op)
    work = np.dtype(np.float64 if image.dtype == np.float64 else np.float32)
    if out.kind == "f" and (rounding != "trunc" or cast != "saturate"):
        bad = "rounding" if rounding != "trunc" else "cast"
        raise ValueError(f"{op}: {bad}={(rounding if bad == 'rounding' else cast)!r} does not apply to a "
                         f"float out_dtype ({out.name}); accepted: the default")
    return dict(image=image, magnitude=magnitude, boundary=boundary, out_dtype=out, cast=cast,
                rounding=rounding, work=work)


def gray(image: np.ndarray, work: np.dtype) -> np.ndarray:
    """The working-type gray image: ``image`` itself (converted) or, for colour, the float32
    ``(0.299f*R + 0.587f*G) + 0.114f*B`` (alpha ignored, no rounding back to uint8)."""
    if image.ndim == 2:
        return image.astype(work)
    c = [np.float32(k) for k in GRAY_WEIGHTS]
    ch = image[..., :3].astype(np.float32)
    return (c[0] * ch[..., 0] + c[1] * ch[..., 1]) + c[2] * ch[..., 2]


def gradient_taps(a: dict, g: np.ndarray, which: str):
    """Yield ``(weight, window)`` for Gx (``which="x"``) or Gy in spec order."""
    oh, ow = out_hw(g.shape[0], g.shape[1], 3, 3, a["boundary"])
    p = pad_image(g, 3, 3, a["boundary"])
    for i, j, w in (GX_TAPS if which == "x" else GY_TAPS):
        yield w, p[i:i + oh, j:j + ow]


def sobel(image, *, magnitude="l1", boundary="valid", out_dtype=np.uint8, cast="saturate",
          rounding="trunc"):
    r"""Sobel gradient magnitude.

    **Input.** Gray ``(H, W)`` uint8, float32 or float64, or colour ``(H, W, 3|4)`` uint8 (RGB or
    RGBA; alpha ignored).  Colour is converted to a float32 gray image
    ``gray = (0.299f*R + 0.587f*G) + 0.114f*B`` evaluated in float32 in that order (constants
    rounded to float32, each product and sum rounded to nearest, no FMA); the gray value is *not*
    rounded back to uint8.  Gray uint8 is converted exactly to float32.

    **Working type** ``F``: float64 for float64 input, float32 otherwise.

    **Gradients** (correlation with the 3x3 masks, anchor (1, 1), borders as ``filter2d``,
    ``boundary="valid"`` by default -> output ``(max(H-2,0), max(W-2,0))``)::

        Kx = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]      Ky = Kx.T
        Gx = -p00 + p02 - 2*p10 + 2*p12 - p20 + p22     (p_ij = gray[y+i-1, x+j-1])
        Gy = -p00 + p20 - 2*p01 + 2*p21 - p02 + p22

    accumulated in ``F`` from +0 in exactly that order; the zero taps are *not* evaluated (an Inf
    in the centre column does not make Gx NaN).

    **Magnitude** in ``F``: ``"l1"`` = ``|Gx| + |Gy|``; ``"l2"`` = ``sqrt(Gx*Gx + Gy*Gy)``
    (correctly rounded IEEE sqrt; overflow of the squares gives Inf, not hypot).

    **Output.** ``out_dtype`` float32/float64: the magnitude converted (round to nearest).
    Integer (uint8 default, int8, uint16, int16, int32): ``rounding`` (``trunc`` /
    ``nearest-even``) then ``cast`` (``saturate`` clips, NaN -> 0; ``wrap`` converts to int64 then
    modulo 2**bits), exactly as ``filter2d``.  Gray uint8 input gives exact float sums.
    ``out_dtype=None`` means the default, as in ``filter2d``; but sobel's default is uint8 for
    every input (the 8-bit edge map of OpenCV's ``Sobel`` + ``convertScaleAbs``), not the image
    dtype as in ``filter2d``, because a float image's gradient magnitude is as often wanted as an
    8-bit map; pass ``out_dtype=image.dtype`` to keep floats.
    """
    a = resolve(image, magnitude, boundary, out_dtype, cast, rounding)
    work, out = a["work"], a["out_dtype"]
    with np.errstate(all="ignore"):
        g = gray(a["image"], work)
        grads = []
        for which in ("x", "y"):
            oh, ow = out_hw(g.shape[0], g.shape[1], 3, 3, a["boundary"])
            acc = np.zeros((oh, ow), work)
            for w, win in gradient_taps(a, g, which):
                acc = acc + work.type(w) * win
            grads.append(acc)
        gx, gy = grads
        if magnitude == "l1":
            mag = np.abs(gx) + np.abs(gy)
        else:
            mag = np.sqrt(gx * gx + gy * gy)
        if out.kind == "f":
            return mag.astype(out)
        return cast_to_int(round_values(mag, rounding), out, cast)
