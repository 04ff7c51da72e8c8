"""filter2d on OpenCL: refconv's own fastest 3x3 uint8 kernels (issue #24), ``best_R{R}``, the
twins of ``filter2d/numba_cuda/best_R{R}`` (``filter2d_best.cl``; the arithmetic paths and their
conditions are those of ``refconv.backends.filter2d_arith.choose_path``).

A work-item computes 16 output columns x ``R`` output rows, the next input row's loads issued
before the current row's arithmetic and stores; where ``W % 16 == 0`` a row's 16 pixels are one
16-byte load and, where the work-item's 16 columns are all interior (tested once), its outputs one
16-byte store.  The ``swar`` path (``filter2d_arith.swar_plan``) holds a row as 16 column pairs
``x[c] | x[c+2] << 16`` and computes two outputs in one uint; its build options carry ``k``, the tap
kinds, the float columns and the sign tests' form (``-DKEXP``, ``-DKINDS``, ``-DFCOLS``,
``-DSIGNHI``).  Off the ``cvt`` path a pixel byte
becomes ``as_float(0x4B000000 | x) - 2**23`` and the output is ``v = rd(trunc(s) * 2**-shift + 1.5 * 2**23)``
(clamped to ``[1.5 * 2**23, 1.5 * 2**23 + 255]`` to saturate), the low byte of whose bits is the
wrapped ``trunc(s) >> shift``; ``2**-shift`` is the kernel argument ``sc``.  On NVIDIA (``-DUSE_PTX``) the round-toward-zero add is PTX ``add.rz.f32``, the
round-down scale ``fma.rm.f32`` and the byte moves ``prmt.b32`` byte permutes; elsewhere portable OpenCL
C giving the same bits (a TwoSum-corrected add, ``floor(t * sc) + 1.5 * 2**23``, shifts and masks).
"""
from __future__ import annotations

import numpy as np

from refconv import opencl as oc
from refconv.backends import filter2d_arith as arith_mod
from refconv.backends.filter2d_arith import ARITH, choose_path, swar_plan
from refconv.variant import Param, Range, Variant

from ._source import shared_source


SRC_NAME = "filter2d_best.cl"
SRC = shared_source("pack4.cl", SRC_NAME)
#: output rows a thread computes.  R = 5 makes the preset's grid one wave on an H100 at 14 blocks
#: of 64 an SM (1842 blocks; R = 2: 2.49 waves, R = 4: 1.25); R = 1, 3, 4, 6 and 8 were measured
#: too (docs/performance.md, issue 24's seventh round) and left out: each R is a kernel of its
#: own, and every one costs the compile check (~23 s of CPU) and CI its conformance
ROWS = (2, 5)
_PATH_NUM = {"cvt": 0, "magic": 1, "exact": 2, "swar": 3}
_SIGNHI = {"shift": 0, "hi": 1, "mixed": 2, "prmt": 3}

SUPPORTS = {
    "dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",), "flip": (False,),
    "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap", "saturate"), "rounding": ("trunc",),
    "out_dtype": (None,), "h": Range(3), "w": Range(3),
}
ORIGIN = "refconv (issue #24): register-blocked rows, 16-byte loads/stores per work-item; spec of seed 000"


def options(rows: int, path: str, vec: bool, sat: bool = False, plan=None, off32: bool = False,
            exact: bool = False) -> tuple:
    """The build options of one specialisation (``-DUSE_PTX`` on the NVIDIA target; on the ``swar``
    path ``plan`` is :func:`~refconv.backends.filter2d_arith.swar_plan`'s ``(k, m, kinds)``: ``-DKEXP``
    and the tap kinds as ``-DKINDS``, a nibble a tap; ``-DFCOLS`` and ``-DSIGNHI`` from
    :mod:`~refconv.backends.filter2d_arith`'s ``SWAR_FLOAT_COLS`` and ``SWAR_SIGN``; ``-DOFF32=1``
    where ``off32``: :func:`~refconv.backends.filter2d_arith.offsets_fit_int32`; ``-DEXACT=1`` where
    ``exact``: :func:`~refconv.backends.filter2d_arith.bands_exact`)."""
    opts = (f"-DROWS={rows}", f"-DPATH={_PATH_NUM[path]}", f"-DVEC={int(vec)}", f"-DSAT={int(sat)}",
            f"-DOFF32={int(off32)}", f"-DEXACT={int(exact)}")
    if path == "swar":
        k, _, kinds = plan
        opts += (f"-DKEXP={k}", "-DKINDS=0x" + "".join(str(d) for d in reversed(kinds)),
                 f"-DFCOLS={arith_mod.SWAR_FLOAT_COLS}", f"-DSIGNHI={_SIGNHI[arith_mod.swar_sign()]}")
    return opts + (("-DUSE_PTX",) if oc.target() == "nvidia" else ())


def _global(H: int, W: int, rows: int, wg_x: int) -> tuple:
    return (oc.roundup(-(-W // 16), wg_x), -(-max(H - 2, 1) // rows))


def _make(rows: int) -> Variant:
    name = f"best_R{rows}"

    def constraint(problem, params):
        return (oc.check_local((params["wg_x"], 1), 0, (SRC, "filter2d_best", options(rows, "cvt", False), SRC_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, wg_x=64, arith="auto"):
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
        H, W = img.shape
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"filter2d/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        vec = W % 16 == 0
        sat = problem.option("cast") == "saturate"
        shift = problem.option("shift")
        path = choose_path(w, arith, shift, sat)
        plan = swar_plan(w, shift, sat) if path == "swar" else None
        off32 = arith_mod.offsets_fit_int32(H, W)
        k = oc.kernel(SRC, "filter2d_best", options(rows, path, vec, sat, plan, off32, arith_mod.bands_exact(H, rows)),
                      SRC_NAME)
        # the scalars (H, W, shift, the bits of 2**-shift) as one __constant int buffer: see the kernel
        prm = np.array([H, W, shift, np.float32(2.0 ** -shift).view(np.int32)], np.int32)
        return oc.launch(k, _global(H, W, rows, wg_x), (wg_x, 1), oc.to_device(img), oc.to_device(w), oc.OUT,
                         oc.to_device(prm), out=out, what=f"filter2d/opencl/{name}")

    return Variant(
        op="filter2d", backend="opencl", name=name, run=run, supports=dict(SUPPORTS),
        params=(Param("wg_x", (8, 16, 32, 64, 128, 256), 64),
                Param("arith", tuple(a for a in ARITH if a != "int"), "auto")),     # no int path here
        available=oc.available, writes="interior", constraint=constraint, origin=ORIGIN,
        doc=(f"3x3 uint8 filter, a work-item computes 16 columns x {rows} rows from register-held input rows, "
             "the next row's loads issued before the row's arithmetic (one 16-byte load a row and one 16-byte "
             "store a chunk where W % 16 == 0 and the chunk is interior, bytes otherwise); "
             "acc=(int)((float)acc+w*(float)x) per tap bit for bit, through conversions (arith=cvt) or, where the "
             "weights bound every partial sum below 2**22, through exact round-toward-zero float adds (one fma a tap "
             "when every product and sum is exact) and then acc>>shift as one round-down fma on a 1.5*2**23-biased "
             "float (its low byte the wrapped result; clamped to saturate), or, for small dyadic weights and a "
             "wrapped output, two outputs in the 16-bit lanes of one uint (one multiply-add a tap for both; "
             "arith=float turns this off); interior only"))


def variants() -> list[Variant]:
    return [_make(r) for r in ROWS]
