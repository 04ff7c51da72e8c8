"""conv2d in Triton: a direct kernel (one program per block of output pixels of one image and
one filter, the C x R x S taps in a loop), an implicit-GEMM kernel (pixels x (c, r, s) times
(c, r, s) x filters with ``tl.dot``, ``input_precision="ieee"``: exact float32 products, so
it is judged by the float bound like any other summation order), and seed 004's cuconv split
(scalar products per tap into a partial buffer, then a sum kernel) and fused forms
(:mod:`._cuconv_kernels`)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels


def _cuconv():
    """The cuconv kernels module (imports triton: at the first launch only)."""
    from . import _cuconv_kernels
    return _cuconv_kernels

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


CUCONV_ORIGIN = "seeds/004_906959956e3859a4.txt (cuconv) §4.3 in Triton; issue 25"
#: cuconv_split's partial buffer (host and device copies) is refused beyond this size
PARTIAL_MAX_BYTES = 4 << 30
CUCONV_PARAMS = (Param("block_pixels", (16, 32, 64, 128), 64), Param("block_c", (1, 4, 16, 32), 16),
                 Param("num_warps", (1, 2, 4, 8), 4))


def _depth_rows(w):
    """The filters ``[M][C][R][S]`` as depth rows ``[M][R][S][C]`` (seed 004's layout)."""
    return np.ascontiguousarray(np.asarray(w).transpose(0, 2, 3, 1))


def _run_split(problem, out, block_pixels=64, block_c=16, num_warps=4):
    """``cuconv_scalar_prods`` over (pixel blocks, N*M, R*S) into a NaN-poisoned partial buffer
    ``[N][R*S][M][Ho*Wo]``, then ``cuconv_sum`` over (pixel blocks, N*M); 1x1 filters: one launch
    writing the output (+ bias) directly."""
    x, w, b, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw) = _geometry(problem)
    f, K, what = _depth_rows(w), R * S, "conv2d/triton/cuconv_split"
    gx = kit.cdiv(Ho * Wo, block_pixels)
    geo = (C, H, W, M, Ho, Wo, R, S, sh, sw, ph, pw, dh, dw)
    if K == 1:
        return kit.launch(_cuconv().cuconv_scalar_prods, (gx, N * M, 1), x, f, b, kit.OUT, *geo, out=out,
                          what=what, num_warps=num_warps, names=["x", "f", "bias", "out"], DIRECT=True,
                          HAS_BIAS=has_bias, BP=block_pixels, BC=block_c)
    part = np.full(N * K * M * Ho * Wo, np.nan, x.dtype)      # a partial never written stays NaN
    kit.launch(_cuconv().cuconv_scalar_prods, (gx, N * M, K), x, f, b, kit.OUT, *geo, out=part,
               what=what, num_warps=num_warps, names=["x", "f", "bias", "part"], DIRECT=False,
               HAS_BIAS=has_bias, BP=block_pixels, BC=block_c)
    return kit.launch(_cuconv().cuconv_sum, (gx, N * M), part, b, kit.OUT, M, K, Ho, Wo, out=out, what=what,
                      num_warps=num_warps, HAS_BIAS=has_bias, BP=block_pixels)


def _run_fused(problem, out, block_pixels=64, block_c=16, num_warps=4):
    """``cuconv_fused`` over (pixel blocks, N*M): every tap's depth-row dot product in one program."""
    x, w, b, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sh, sw, ph, pw, dh, dw) = _geometry(problem)
    return kit.launch(_cuconv().cuconv_fused, (kit.cdiv(Ho * Wo, block_pixels), N * M), x, _depth_rows(w), b,
                      kit.OUT, C, H, W, M, Ho, Wo, R, S, sh, sw, ph, pw, dh, dw, out=out,
                      what="conv2d/triton/cuconv_fused", num_warps=num_warps, HAS_BIAS=has_bias,
                      BP=block_pixels, BC=block_c)


def _constraint_cuconv(split):
    """CUDA's grid limits, split's partial buffer (at most :data:`PARTIAL_MAX_BYTES`) and the
    interpreter's budget: split's first launch is (pixel blocks, N*M, R*S) programs of
    ceil(C / block_c) steps, its sum (pixel blocks, N*M) of R*S steps; fused is (pixel blocks,
    N*M) programs of R*S*ceil(C / block_c) steps."""
    def constraint(problem, p):
        d = problem.dims
        ho, wo = _out_hw(problem)
        blocks, nm, k = kit.cdiv(max(ho * wo, 1), p["block_pixels"]), d["n"] * d["m"], d["r"] * d["s"]
        csteps = kit.cdiv(d["c"], p["block_c"])
        if split:
            part = nm * k * ho * wo * np.dtype(d["dtype"]).itemsize if k > 1 else 0
            if part > PARTIAL_MAX_BYTES:
                return (f"the partial buffer N*R*S*M*Ho*Wo takes {part} bytes; cuconv_split allows at most "
                        f"{PARTIAL_MAX_BYTES}")
            return (kit.grid_fits((blocks, nm, k)) or kit.budget(blocks * nm * k, csteps)
                    or (kit.budget(blocks * nm, k) if k > 1 else None))
        return kit.grid_fits((blocks, nm)) or kit.budget(blocks * nm, k * csteps)
    return constraint


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
        Variant(op="conv2d", backend="triton", name="cuconv_split", run=_run_split, supports=SUPPORTS,
                params=CUCONV_PARAMS, available=kit.available, constraint=_constraint_cuconv(True),
                origin=f"{CUCONV_ORIGIN} (scalar_prods_kernel + sum_kernel)",
                doc="scalar_prods: per (block_pixels pixels, image*filter, tap) the C-long dot products of "
                    "the input column and the [M][R][S][C] depth row (block_c channels at a time, tl.sum) "
                    "into an R*S x M x Ho*Wo partial buffer per image; sum: the taps in order (+ bias); "
                    "1x1 filters write the output directly"),
        Variant(op="conv2d", backend="triton", name="cuconv_fused", run=_run_fused, supports=SUPPORTS,
                params=CUCONV_PARAMS, available=kit.available, constraint=_constraint_cuconv(False),
                origin=f"{CUCONV_ORIGIN} (fused_conv_kernel)",
                doc="one program per block_pixels pixels of one (image, filter): for each tap the C-long "
                    "depth-row dot product (block_c channels at a time, tl.sum), accumulated, + bias"),
    ]
