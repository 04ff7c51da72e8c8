"""conv2d in Triton: a direct kernel (one program per block of output pixels of one image and
one filter, the C x R x S taps in a loop) and an implicit-GEMM kernel (pixels x (c, r, s) times
(c, r, s) x filters with ``tl.dot``, ``input_precision="ieee"``: exact float32 products, so
it is judged by the float bound like any other summation order)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels

ORIGIN = "seed 004 (cuconv: direct convolution, filters [M][C][R][S]) in Triton; issue 25"
SUPPORTS = {"dtype": ("float32", "float64"), "groups": (1,), "n": Range(1), "c": Range(1),
            "h": Range(1), "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1),
            "bias": (0, 1), "stride": Range(1), "padding": Range(0), "dilation": Range(1)}


def _pair(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _geometry(problem):
    x = np.ascontiguousarray(problem.inputs["x"])
    w = np.ascontiguousarray(problem.inputs["w"])
    N, C, H, W = x.shape
    M, _, R, S = w.shape
    (sh, sw), (ph, pw), (dh, dw) = (_pair(problem.option(k)) for k in ("stride", "padding", "dilation"))
    Ho = (H + 2 * ph - dh * (R - 1) - 1) // sh + 1
    Wo = (W + 2 * pw - dw * (S - 1) - 1) // sw + 1
    bias = problem.inputs.get("bias")
    b = np.ascontiguousarray(bias) if bias is not None else np.zeros(1, x.dtype)
    return x, w, b, bias is not None, (N, C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw)


def _run_direct(problem, out, block_pixels=128, num_warps=4):
    x, w, b, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw) = _geometry(problem)
    return kit.launch(_kern().conv2d_direct, (kit.cdiv(Ho * Wo, block_pixels), N * M), x, w, b, kit.OUT,
                      C, H, W, M, Ho, Wo, sh, sw, ph, pw, dh, dw, out=out, what="conv2d/triton/direct",
                      num_warps=num_warps, R=R, S=S, HAS_BIAS=has_bias, BP=block_pixels)


def _run_igemm(problem, out, block_m=16, block_n=16, block_k=16, num_warps=4):
    x, w, b, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw) = _geometry(problem)
    grid = (kit.cdiv(N * Ho * Wo, block_m), kit.cdiv(M, block_n))
    return kit.launch(_kern().conv2d_igemm, grid, x, w, b, kit.OUT, N, C, H, W, M, Ho, Wo,
                      sh, sw, ph, pw, dh, dw, C * R * S, out=out, what="conv2d/triton/implicit_gemm",
                      num_warps=num_warps, R=R, S=S, HAS_BIAS=has_bias, BM=block_m, BN=block_n, BK=block_k,
                      PRECISION="ieee")


def _out_hw(problem):
    d = problem.dims
    (sh, sw), (ph, pw), (dh, dw) = (_pair(problem.option(k)) for k in ("stride", "padding", "dilation"))
    return ((d["h"] + 2 * ph - dh * (d["r"] - 1) - 1) // sh + 1, (d["w"] + 2 * pw - dw * (d["s"] - 1) - 1) // sw + 1)


def _constraint_direct(problem, p):
    d = problem.dims
    ho, wo = _out_hw(problem)
    return kit.budget(kit.cdiv(max(ho * wo, 1), p["block_pixels"]) * d["n"] * d["m"], d["c"] * d["r"] * d["s"])


def _constraint_igemm(problem, p):
    d = problem.dims
    ho, wo = _out_hw(problem)
    programs = kit.cdiv(max(d["n"] * ho * wo, 1), p["block_m"]) * kit.cdiv(d["m"], p["block_n"])
    return kit.budget(programs, kit.cdiv(d["c"] * d["r"] * d["s"], p["block_k"]))


def variants() -> list[Variant]:
    return [
        Variant(op="conv2d", backend="triton", name="direct", run=_run_direct, supports=SUPPORTS,
                params=(Param("block_pixels", (32, 128, 256), 128), Param("num_warps", (1, 2, 4, 8), 4)),
                available=kit.available, constraint=_constraint_direct, origin=ORIGIN,
                doc="one program per block_pixels output pixels of one (image, filter): the C*R*S taps in "
                    "order, masked zero padding, + bias"),
        Variant(op="conv2d", backend="triton", name="implicit_gemm", run=_run_igemm,
                supports=dict(SUPPORTS, dtype=("float32",)),
                params=(Param("block_m", (16, 32), 16), Param("block_n", (16, 32), 16),
                        Param("block_k", (16, 32), 16), Param("num_warps", (1, 2, 4), 4)),
                available=kit.available, constraint=_constraint_igemm, origin=ORIGIN,
                doc="implicit GEMM: (N*Ho*Wo) x (C*R*S) gathered patches times the (C*R*S) x M filters "
                    "with tl.dot(input_precision='ieee') in block_m x block_n x block_k tiles, + bias"),
    ]
