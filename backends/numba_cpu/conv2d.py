"""conv2d: the cuconv thesis's CPU two-stage convolution (seed 004, section 4.4:
``computeScalarProducts`` then ``sumPartialResults``).

The filters are first converted to the thesis's [M][R][S][C] layout.  Stage 1 computes, for
every filter offset k = fy·S + fx, every filter m and every output pixel (y, x), the dot product
over the input channels of the input pixel under that offset with the filter tap, into a
partial buffer of K·M·Ho·Wo values (K = R·S).  The thesis skips an offset whose input pixel lies
in the zero padding; here its taps are evaluated as ``w * 0`` like the spec's ghost cells, which
differs only for non-finite weights (``Inf * 0`` is NaN).  Stage 2 sums the K partial results of every output pixel.  refconv
generalises the thesis's N=1, stride 1, no-dilation, no-bias code to N ≥ 1, stride, padding,
dilation and bias (added after stage 2), groups = 1, cross-correlation as in the spec::

    y[n,m,oy,ox] = bias[m] + sum_{fy,fx} sum_c x[n, c, oy·stride − pad + fy·dil, ox·stride − pad + fx·dil] · w[m,c,fy,fx]

Accumulation is in the input dtype (float32 or float64).  Launch parameter ``partial_layout``:
the thesis's text describes the buffer as (R·S)×M×Ho×Wo (``kmhw``) while its ``partIdx`` indexes
it as [M][K][Ho][Wo] (``mkhw``); both are offered (same values, different memory walk).
"""
from __future__ import annotations

import numpy as np

from refconv import Param, Variant

from . import NAME
from ._util import c_array, c_target, check_out, njit

LAYOUTS = ("mkhw", "kmhw")


@njit
def _scalar_products(x, f_mrsc, partial, kmajor, stride, pad, dil, Ho, Wo):
    """Stage 1 for one image x[C][H][W]; f_mrsc is [M][R][S][C]."""
    C, H, W = x.shape
    M, R, S, _ = f_mrsc.shape
    zero = np.zeros(1, dtype=partial.dtype)[0]      # +0 of the accumulation type
    for fy in range(R):
        for fx in range(S):
            k = fy * S + fx
            for m in range(M):
                for y in range(Ho):
                    for xo in range(Wo):
                        acc = zero
                        iy = y * stride - pad + fy * dil
                        ix = xo * stride - pad + fx * dil
                        if 0 <= iy < H and 0 <= ix < W:
                            for c in range(C):
                                acc += x[c, iy, ix] * f_mrsc[m, fy, fx, c]
                        else:
                            # The thesis skips padding taps; the spec evaluates them as w*0
                            # (NaN for an infinite weight), so do the same.
                            for c in range(C):
                                acc += zero * f_mrsc[m, fy, fx, c]
                        if kmajor:
                            partial[k, m, y, xo] = acc
                        else:
                            partial[m, k, y, xo] = acc


@njit
def _sum_partials(partial, out_n, kmajor, bias, has_bias):
    """Stage 2 for one image: out_n[M][Ho][Wo] = sum_k partial[.., k, ..] (+ bias)."""
    M, Ho, Wo = out_n.shape
    K = partial.shape[0] if kmajor else partial.shape[1]
    zero = np.zeros(1, dtype=partial.dtype)[0]
    for m in range(M):
        for y in range(Ho):
            for xo in range(Wo):
                s = zero
                for k in range(K):
                    if kmajor:
                        s += partial[k, m, y, xo]
                    else:
                        s += partial[m, k, y, xo]
                if has_bias:
                    s += bias[m]
                out_n[m, y, xo] = s


@njit
def _conv2d(x, f_mrsc, bias, has_bias, out, kmajor, stride, pad, dil):
    N = x.shape[0]
    M, R, S, _ = f_mrsc.shape
    Ho, Wo = out.shape[2], out.shape[3]
    if kmajor:
        partial = np.empty((R * S, M, Ho, Wo), dtype=x.dtype)
    else:
        partial = np.empty((M, R * S, Ho, Wo), dtype=x.dtype)
    for n in range(N):
        _scalar_products(x[n], f_mrsc, partial, kmajor, stride, pad, dil, Ho, Wo)
        _sum_partials(partial, out[n], kmajor, bias, has_bias)
    return out


def out_size(n: int, k: int, stride: int, pad: int, dil: int) -> int:
    return (n + 2 * pad - dil * (k - 1) - 1) // stride + 1


def run(problem, out, partial_layout="mkhw"):
    ins = problem.inputs
    x = c_array(ins["x"])
    w = ins["w"]
    stride, pad, dil = (int(problem.option(k)) for k in ("stride", "padding", "dilation"))
    if problem.dims.get("groups", 1) != 1:
        raise ValueError("conv2d/numba_cpu/two_stage supports groups=1 only")
    N, C, H, W = x.shape
    M, _, R, S = w.shape
    Ho, Wo = out_size(H, R, stride, pad, dil), out_size(W, S, stride, pad, dil)
    check_out(out, (N, M, max(Ho, 0), max(Wo, 0)), "conv2d")
    if Ho <= 0 or Wo <= 0 or N == 0:
        return out
    f_mrsc = c_array(np.transpose(w, (0, 2, 3, 1)).astype(x.dtype, copy=False))
    has_bias = "bias" in ins and ins["bias"] is not None
    bias = c_array(ins["bias"]).astype(x.dtype, copy=False) if has_bias else np.zeros(M, x.dtype)
    with c_target(out) as target:
        _conv2d(x, f_mrsc, bias, has_bias, target, partial_layout == "kmhw", stride, pad, dil)
    return out


def variants():
    return [
        Variant(
            op="conv2d", backend=NAME, name="two_stage", run=run,
            supports={"dtype": ("float32", "float64"), "groups": (1,)},
            params=(Param("partial_layout", LAYOUTS, "mkhw"),),
            origin="seed 004, section 4.4 (computeScalarProducts + sumPartialResults)",
            doc="partial[k,m,y,x] = sum_c x[c, y*st-p+fy*d, x*st-p+fx*d] * f[m,fy,fx,c]; "
                "y[m,y,x] = sum_k partial[k,m,y,x] + bias[m]",
        )
    ]
