"""sobel on OpenCL: refconv's own fastest kernels (issue #24), ``best_R{R}``, the twins of
``sobel/numba_cuda/best_R{R}`` (``sobel_best.cl``): a work-item computes 8 output columns x ``R``
output rows from register-held gray rows, the next input row's loads issued before the current row's
arithmetic; an RGBA row with ``W % 8 == 0`` is two 16-byte loads per work-item (and two 4-byte halo
loads) and the 8 outputs one 8-byte store where the chunk is interior; spec arithmetic bit for bit.

A channel byte becomes ``2**23 + x`` as ``as_float(0x4B000000 | x)`` and its gray product one fma on
it (``fma(C, 2**23 + x, -C * 2**23) = rn(C*x)``); on NVIDIA (``-DUSE_PTX``) the byte to float is one
PTX byte permute and the truncating, saturating output ``rz(min(m, 255) + 2**23)`` (``add.rz.f32``,
the low byte), elsewhere portable OpenCL C giving the same bits."""
from __future__ import annotations

import numpy as np

from refconv import opencl as oc
from refconv.variant import Param, Range, Variant

from ._source import shared_source


SRC_NAME = "sobel_best.cl"
SRC = shared_source("pack4.cl", SRC_NAME)
ROWS = (1, 2, 4, 8)
#: work-items a group by default: on the sobel preset best_R8 was about a third faster with 256
#: than with 64 (lab/sweeps/gpu_roofline_sweep.py)
WG_X = 256
ORIGIN = "refconv (issue #24): register-blocked rows, 16-byte loads per work-item; spec of seed 002"
#: output columns a work-item computes (the Numba twin's COLS)
COLS = 8
SUPPORTS = {"dtype": ("uint8",), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate",), "rounding": ("trunc",)}


def options(rows: int, ch: int, l2: bool, vec: bool) -> tuple:
    """The build options of one specialisation (correctly rounded sqrt for the L2 magnitude;
    ``-DUSE_PTX`` on the NVIDIA target)."""
    opts = ("-cl-fp32-correctly-rounded-divide-sqrt", f"-DROWS={rows}", f"-DCH={ch}", f"-DL2={int(l2)}",
            f"-DVEC={int(vec)}")
    return opts + (("-DUSE_PTX",) if oc.target() == "nvidia" else ())


def _global(H: int, W: int, rows: int, wg_x: int) -> tuple:
    return (oc.roundup(-(-W // COLS), wg_x), -(-max(H - 2, 1) // rows))


def _make(rows: int) -> Variant:
    name = f"best_R{rows}"

    def constraint(problem, params):
        opts = options(rows, problem.dims["channels"], False, False)
        return (oc.check_local((params["wg_x"], 1), 0, (SRC, "sobel_best", opts, SRC_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, wg_x=WG_X):
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape[:2]
        ch = 0 if img.ndim == 2 else img.shape[2]
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"sobel/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        vec = ch == 4 and W % COLS == 0
        k = oc.kernel(SRC, "sobel_best", options(rows, ch, problem.option("magnitude") == "l2", vec), SRC_NAME)
        return oc.launch(k, _global(H, W, rows, wg_x), (wg_x, 1), oc.to_device(img), oc.OUT,
                         np.int32(H), np.int32(W), out=out, what=f"sobel/opencl/{name}")

    return Variant(
        op="sobel", backend="opencl", name=name, run=run, supports=dict(SUPPORTS),
        params=(Param("wg_x", (8, 16, 32, 64, 128, 256), WG_X),), available=oc.available, writes="interior",
        constraint=constraint, origin=ORIGIN,
        doc=(f"Sobel |Gx|+|Gy| (or L2) of the in-kernel float32 gray image, a work-item computes {COLS} columns x "
             f"{rows} rows from register-held gray rows, the next row's loads issued before the row's arithmetic (two "
             f"16-byte loads a row and one 8-byte store for RGBA with W % {COLS} == 0, bytes otherwise); spec "
             "arithmetic bit for bit; uint8 out, trunc + saturate, interior only"))


def variants() -> list[Variant]:
    return [_make(r) for r in ROWS]
