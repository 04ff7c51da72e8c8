"""``conv2d``: NCHW 2-D convolution layer (cross-correlation), torch.nn.functional.conv2d semantics."""
from __future__ import annotations

import numpy as np

from ._validate import as_array, int_pair, integer


#: The spec builds the zero-padded input ``xpad`` in memory: a padding that would make it larger
#: than this many elements (2 GiB of float64) is refused by name before anything is allocated.
MAX_PADDED_ELEMENTS = 2 ** 28


def resolve(x, w, bias, stride, padding, dilation, groups):
    op = "conv2d"
    x = as_array("x", x, ndims=4, dtypes=("float32", "float64"), op=op)
    w = as_array("w", w, ndims=4, dtypes=("float32", "float64"), op=op)
    if w.dtype != x.dtype:
        raise TypeError(f"{op}: w has dtype {w.dtype.name} but x has {x.dtype.name}; accepted: the same dtype")
    if bias is not None:
        bias = as_array("bias", bias, ndims=1, dtypes=(x.dtype,), op=op)
    stride = int_pair("stride", stride, lo=1, op=op)
    padding = int_pair("padding", padding, lo=0, op=op)
    dilation = int_pair("dilation", dilation, lo=1, op=op)
    groups = integer("groups", groups, lo=1, op=op)
    n, c, h, wd = x.shape
    m, cg, r, s = w.shape
    if 0 in x.shape:
        raise ValueError(f"{op}: x must be non-empty, got shape {x.shape}; accepted: (N, C, H, W) all >= 1")
    if 0 in w.shape:
        raise ValueError(f"{op}: w must be non-empty, got shape {w.shape}; accepted: (M, C//groups, R, S) all >= 1")
    if c % groups or m % groups:
        raise ValueError(f"{op}: groups={groups} must divide both C={c} (x.shape[1]) and M={m} (w.shape[0]); "
                         f"accepted: a common divisor")
    if cg != c // groups:
        raise ValueError(f"{op}: w has shape {w.shape}, w.shape[1] must be C//groups = {c // groups} "
                         f"(x has C={c}, groups={groups})")
    if bias is not None and bias.shape != (m,):
        raise ValueError(f"{op}: bias has shape {bias.shape}; accepted: ({m},) (w.shape[0])")
    padded = n * c * (h + 2 * padding[0]) * (wd + 2 * padding[1])
    if padded > MAX_PADDED_ELEMENTS and (padding[0] or padding[1]):
        raise ValueError(f"{op}: padding={padding} makes the zero-padded input (N, C, H + 2*padding[0], "
                         f"W + 2*padding[1]) = {(n, c, h + 2 * padding[0], wd + 2 * padding[1])}, {padded} "
                         f"elements; accepted: padding for which that is at most {MAX_PADDED_ELEMENTS} "
                         f"elements (the spec materialises the padded input)")
    oh = (h + 2 * padding[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: output would be empty ({oh}x{ow}) for x of shape {x.shape}, w of shape "
                         f"{w.shape}, stride={stride}, padding={padding}, dilation={dilation}; accepted: "
                         f"H + 2*padding - dilation*(R-1) - 1 >= 0 (and the same for W)")
    return dict(x=x, w=w, bias=bias, stride=stride, padding=padding, dilation=dilation,
                groups=groups, oh=oh, ow=ow)


def windows(a: dict):
    """Yield ``(r, s, xwin)`` with ``xwin`` of shape (N, C, OH, OW): the padded input sampled at
    tap (r, s) for every output position."""
    x, (sh, sw), (ph, pw), (dh, dw) = a["x"], a["stride"], a["padding"], a["dilation"]
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = a["oh"], a["ow"]
    _, _, r, s = a["w"].shape
    for i in range(r):
        for j in range(s):
            y0, x0 = i * dh, j * dw
            yield i, j, xp[:, :, y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw]


def conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, groups=1):
    r"""2-D convolution layer, exactly ``torch.nn.functional.conv2d`` semantics.

    ``x``: ``(N, C, H, W)``; ``w``: ``(M, C//groups, R, S)``; ``bias``: None or ``(M,)``; all the
    same dtype, float32 or float64.  ``stride``, ``padding`` (zero padding), ``dilation``: an int
    or a pair (rows, columns); ``groups`` divides C and M.  Output ``(N, M, OH, OW)``::

        OH = floor((H + 2*ph - dh*(R-1) - 1) / sh) + 1      (OW likewise)
        g  = m // (M // groups)
        out[n, m, y, x] = bias[m] + sum_{c<C/g} sum_{r<R} sum_{s<S}
                          w[m, c, r, s] * xpad[n, g*(C/g) + c, y*sh + r*dh, x*sw + s*dw]

    (cross-correlation, no kernel flip; ``xpad`` is ``x`` with ``padding`` zeros on each side).

    **Point value.** The sum (bias included) is computed in float64 — in an unspecified order —
    and rounded once to the dtype.  For float32 this is the exact result rounded (up to float64
    error, far below a float32 ulp); for float64 it is one float64 summation order.  The
    tolerance (``refconv.tolerance``) accepts any summation order and FMA contraction,
    ``n = C/groups*R*S (+1 with bias)`` terms.  Ghost (padding) cells contribute ``w*0`` (NaN if
    ``w`` is +-Inf); NaN/Inf propagate as IEEE arithmetic does.  An empty output is an error.
    """
    a = resolve(x, w, bias, stride, padding, dilation, groups)
    x, w, groups = a["x"], a["w"], a["groups"]
    n, c, _, _ = x.shape
    m, cg = w.shape[:2]
    mg = m // groups
    out = np.zeros((n, m, a["oh"], a["ow"]), np.float64)
    w64 = w.astype(np.float64)
    with np.errstate(all="ignore"):
        for i, j, xw in windows(a):
            xw = xw.astype(np.float64)
            for g in range(groups):
                out[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", xw[:, g * cg:(g + 1) * cg], w64[g * mg:(g + 1) * mg, :, i, j])
        if a["bias"] is not None:
            out += a["bias"].astype(np.float64)[None, :, None, None]
        return out.astype(x.dtype)
