"""sobel in Triton (seed 002): one program per ``block_h x block_w`` tile of the valid output,
gray or RGB(A) uint8 input converted in float32, L1 or L2 (``sqrt_rn``) magnitude, truncation or
round-half-even, explicit saturation or wrap to uint8."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels

ORIGIN = "seed 002 (Kim, Kim, Woo, Ihm: Sobel section) in Triton; issue 25"
SUPPORTS = {"dtype": ("uint8",), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate", "wrap"), "rounding": ("trunc", "nearest-even")}
PARAMS = (Param("block_h", (2, 4, 8, 16), 8), Param("block_w", (4, 8, 16, 32), 16),
          Param("num_warps", (1, 2, 4, 8), 4))


def _run(problem, out, block_h=8, block_w=16, num_warps=4):
    img = np.ascontiguousarray(problem.inputs["image"])
    H, W = img.shape[:2]
    Ho, Wo = H - 2, W - 2
    if out.shape != (Ho, Wo) or out.dtype != np.uint8:
        raise ValueError(f"sobel/triton/tiled: output {out.shape} {out.dtype}, expected ({Ho}, {Wo}) uint8")
    o = problem.option
    ch = 0 if img.ndim == 2 else img.shape[2]
    return kit.launch(_kern().sobel_tiled, (kit.cdiv(Ho, block_h), kit.cdiv(Wo, block_w)),
                      img, kit.OUT, H, W, Ho, Wo, out=out, what="sobel/triton/tiled", num_warps=num_warps,
                      CH=ch, L2=o("magnitude") == "l2", RNE=o("rounding") == "nearest-even",
                      WRAP=o("cast") == "wrap", BH=block_h, BW=block_w)


def _constraint(problem, p):
    d = problem.dims
    grid = (kit.cdiv(d["h"] - 2, p["block_h"]), kit.cdiv(d["w"] - 2, p["block_w"]))
    return kit.grid_fits(grid) or kit.budget(grid[0] * grid[1], 12)


def variants() -> list[Variant]:
    return [Variant(op="sobel", backend="triton", name="tiled", run=_run, supports=SUPPORTS, params=PARAMS,
                    available=kit.available, constraint=_constraint, origin=ORIGIN,
                    doc="Gx, Gy in the spec's tap order in float32 (zero taps skipped), |Gx|+|Gy| or "
                        "sqrt_rn(Gx^2+Gy^2), trunc or half-even rounding, explicit clamp / wrap to uint8")]
