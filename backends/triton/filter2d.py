"""filter2d in Triton: the uint8 integer path of seed 000 (int32 accumulator through float32,
explicit saturation, shift, wrap or saturate) and the float32 path, both tiled: one program
computes ``coarsen`` tiles of ``block_h x block_w`` outputs, side by side along x (the seed's
coarsening factor), every channel of a planar image in its own program column (grid z)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels

ORIGIN = "seed 000 (Ozer & Demirci, 3x3 uint8 convolution: tiles, coarsening) in Triton; issue 25"
BORDERS = {"valid": 0, "zero": 1, "replicate": 2}
COMMON = {"flip": (False, True), "boundary": tuple(BORDERS), "c": Range(0), "kh": Range(1), "kw": Range(1),
          "h": Range(1), "w": Range(1)}
SUPPORTS_U8 = dict(COMMON, dtype=("uint8",), accumulator=("int",), shift=Range(0, 8), cast=("wrap", "saturate"),
                   rounding=("trunc",), out_dtype=(None, "uint8"))
SUPPORTS_U8F = dict(COMMON, dtype=("uint8",), accumulator=(None, "float32"), shift=Range(0, 8),
                    cast=("wrap", "saturate"), rounding=("trunc", "nearest-even"), out_dtype=(None, "uint8"))
SUPPORTS_F32 = dict(COMMON, dtype=("float32",), accumulator=(None, "float32"), out_dtype=(None, "float32"))
PARAMS = (Param("block_h", (2, 4, 8, 16), 8), Param("block_w", (4, 8, 16, 32), 16),
          Param("coarsen", (1, 2, 3, 4), 1), Param("num_warps", (1, 2, 4, 8), 4))


def _run(name, integer, u8_float=False):
    def run(problem, out, block_h=8, block_w=16, coarsen=1, num_warps=4):
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32)
        C = 1 if img.ndim == 2 else img.shape[0]
        H, W = img.shape[-2:]
        KH, KW = w.shape
        border = BORDERS[problem.option("boundary")]
        Ho, Wo = (max(H - KH + 1, 0), max(W - KW + 1, 0)) if border == 0 else (H, W)
        if out.shape[-2:] != (Ho, Wo):
            raise ValueError(f"filter2d/triton/{name}: output {out.shape}, expected (..., {Ho}, {Wo})")
        if out.size == 0:                   # an image smaller than the kernel: nothing to compute
            return out
        if problem.option("flip"):
            w = np.ascontiguousarray(w[::-1, ::-1])
        u8 = integer or u8_float
        shift = int(problem.option("shift")) if u8 else 0
        sat = int(problem.option("cast") == "saturate") if u8 else 0
        rne = u8_float and problem.option("rounding") == "nearest-even"
        grid = (kit.cdiv(Ho, block_h), kit.cdiv(Wo, block_w * coarsen), C)
        return kit.launch(_kern().filter2d_tiled, grid, img, w, kit.OUT, H, W, Ho, Wo, shift, 2.0 ** -shift, out=out,
                          what=f"filter2d/triton/{name}", num_warps=num_warps,
                          KH=KH, KW=KW, BORDER=border, INTEGER=integer, SAT=sat,
                          BH=block_h, BW=block_w, CF=coarsen, U8_FLOAT=u8_float, RNE=rne)
    return run


def _constraint(problem, p):
    d = problem.dims
    valid = problem.option("boundary") == "valid"
    ho = max(d["h"] - d["kh"] + 1, 0) if valid else d["h"]
    wo = max(d["w"] - d["kw"] + 1, 0) if valid else d["w"]
    grid = (kit.cdiv(ho, p["block_h"]), kit.cdiv(wo, p["block_w"] * p["coarsen"]), max(d["c"], 1))
    return kit.grid_fits(grid) or kit.budget(grid[0] * grid[1] * grid[2], p["coarsen"] * d["kh"] * d["kw"])


def variants() -> list[Variant]:
    return [
        Variant(op="filter2d", backend="triton", name="u8_tiled", run=_run("u8_tiled", True),
                supports=SUPPORTS_U8, params=PARAMS, available=kit.available, constraint=_constraint, origin=ORIGIN,
                doc="uint8, any kh x kw: every tap acc = int(float(acc) + w*float(x)) in float32 with explicit "
                    "int32 saturation (NaN -> 0), acc >> shift, explicit clamp (saturate) or & 255 (wrap); "
                    "tiles of block_h x block_w outputs, coarsen tiles per program along x"),
        Variant(op="filter2d", backend="triton", name="u8f_tiled", run=_run("u8f_tiled", False, True),
                supports=SUPPORTS_U8F, params=PARAMS, available=kit.available, constraint=_constraint, origin=ORIGIN,
                doc="uint8 with the float32 accumulator: tap-order float32 sum (no FMA), * 2**-shift, trunc or "
                    "half-even rounding, explicit clamp to uint8 (saturate; NaN -> 0) or C's int64 conversion "
                    "then & 255 (wrap); tiles as u8_tiled"),
        Variant(op="filter2d", backend="triton", name="f32_tiled", run=_run("f32_tiled", False),
                supports=SUPPORTS_F32, params=PARAMS, available=kit.available, constraint=_constraint, origin=ORIGIN,
                doc="float32 correlation in tap order (no FMA: enable_fp_fusion=False on the GPU), zero / "
                    "replicate / valid borders by masked and clamped loads; tiles as u8_tiled"),
    ]
