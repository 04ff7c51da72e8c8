"""filter2d on OpenCL: refconv's own fastest 3x3 uint8 kernels (issue #24), ``best_R{R}``, the
twins of ``filter2d/numba_cuda/best_R{R}`` (``filter2d_best.cl``; the arithmetic paths and their
conditions are those of ``refconv.backends.filter2d_arith.choose_path``).

A work-item computes 16 output columns x ``R`` output rows, the next input row's loads issued
before the current row's arithmetic and stores; where ``W % 16 == 0`` a row's 16 pixels are one
16-byte load and, where the work-item's 16 columns are all interior (tested once), its outputs one
16-byte store.  The ``swar`` path (``filter2d_arith.swar_plan``) holds a row as 16 column pairs
``x[c] | x[c+2] << 16`` and computes two outputs in one uint; its build options carry ``k`` and the
tap kinds (``-DKEXP``, ``-DKINDS``).  Off the ``cvt`` path a pixel byte
becomes ``as_float(0x4B000000 | x) - 2**23`` and the output is ``v = rd(trunc(s) * 2**-shift + 1.5 * 2**23)``
(clamped to ``[1.5 * 2**23, 1.5 * 2**23 + 255]`` to saturate), the low byte of whose bits is the
wrapped ``trunc(s) >> shift``; ``2**-shift`` is the kernel argument ``sc``.  On NVIDIA (``-DUSE_PTX``) the round-toward-zero add is PTX ``add.rz.f32``, the
round-down scale ``fma.rm.f32`` and the byte moves ``prmt.b32`` byte permutes; elsewhere portable OpenCL
C giving the same bits (a TwoSum-corrected add, ``floor(t * sc) + 1.5 * 2**23``, shifts and masks).

What a kernel is built from is one frozen :class:`Build` (the design's ``rows``, and what the host
picks for a problem); the shipped designs are :data:`BEST_R2` and :data:`BEST_R5`, :func:`options`
gives a build's build options and ``docs/kernels/`` holds the preset's (``tests/test_kernel_sources.py``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from refconv import opencl as oc
from refconv.backends import filter2d_arith as arith_mod
from refconv.backends.filter2d_arith import ARITH, choose_path, swar_plan
from refconv.variant import Param, Range, Variant

from ._source import shared_source


SRC_NAME = "filter2d_best.cl"
SRC = shared_source("pack4.cl", SRC_NAME)
_PATH_NUM = {"cvt": 0, "magic": 1, "exact": 2, "swar": 3}


@dataclass(frozen=True)
class Build:
    """One kernel build: the design's ``rows`` (output rows a work-item computes; each R is a kernel of
    its own), and what the host picks for a problem (:func:`specialise`): the arithmetic ``path``
    (``cvt``, ``magic``, ``exact`` or ``swar``), ``vec`` (``W % 16 == 0``: 16-byte rows), ``sat`` (a
    saturating cast, else wrap), on the ``swar`` path ``k`` and the tap ``kinds``
    (:func:`refconv.backends.filter2d_arith.swar_plan`), ``off32``
    (:func:`refconv.backends.filter2d_arith.offsets_fit_int32`) and ``exact``
    (:func:`refconv.backends.filter2d_arith.bands_exact`).  ``max_registers``: a cap on a
    work-item's registers on NVIDIA (``-cl-nv-maxrregcount``; None: the compiler's choice)."""

    rows: int
    path: str = "cvt"
    vec: bool = False
    sat: bool = False
    k: int = 0
    kinds: tuple = ()
    off32: bool = False
    exact: bool = False
    max_registers: int | None = None


#: the shipped designs, ``filter2d/opencl/best_R2`` and ``best_R5``
BEST_R2 = Build(rows=2)
BEST_R5 = Build(rows=5)
SHIPPED = (BEST_R2, BEST_R5)

SUPPORTS = {
    "dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",), "flip": (False,),
    "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap", "saturate"), "rounding": ("trunc",),
    "out_dtype": (None,), "h": Range(3), "w": Range(3),
}
ORIGIN = "refconv (issue #24): register-blocked rows, 16-byte loads/stores per work-item; spec of seed 000"


def options(build: Build, nvidia: bool) -> tuple:
    """The build options of ``build`` (``nvidia``: for NVIDIA's OpenCL, ``-DUSE_PTX``); on the ``swar``
    path ``-DKEXP`` and the tap kinds as ``-DKINDS``, a nibble a tap, tap 0 lowest."""
    b = build
    opts = (f"-DROWS={b.rows}", f"-DPATH={_PATH_NUM[b.path]}", f"-DVEC={int(b.vec)}", f"-DSAT={int(b.sat)}",
            f"-DOFF32={int(b.off32)}", f"-DEXACT={int(b.exact)}")
    if b.path == "swar":
        opts += (f"-DKEXP={b.k}", "-DKINDS=0x" + "".join(str(d) for d in reversed(b.kinds)))
    if nvidia and b.max_registers is not None:
        opts += (f"-cl-nv-maxrregcount={b.max_registers}",)
    return opts + (("-DUSE_PTX",) if nvidia else ())


def specialise(design: Build, problem, arith: str = "auto") -> Build:
    """``design`` specialised for ``problem``: the arithmetic path chosen from its weights and output
    stage (``arith`` as :func:`refconv.backends.filter2d_arith.choose_path` takes it), the layout,
    the cast, the two-lane plan and the indexing."""
    w = np.asarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
    H, W = problem.inputs["image"].shape
    sat = problem.option("cast") == "saturate"
    shift = problem.option("shift")
    path = choose_path(w, arith, shift, sat)
    k, kinds = 0, ()
    if path == "swar":
        k, _, kinds = swar_plan(w, shift, sat)
    return dataclasses.replace(design, path=path, vec=W % 16 == 0, sat=sat, k=k, kinds=kinds,
                               off32=arith_mod.offsets_fit_int32(H, W),
                               exact=arith_mod.bands_exact(H, design.rows))


def _global(H: int, W: int, rows: int, wg_x: int) -> tuple:
    return (oc.roundup(-(-W // 16), wg_x), -(-max(H - 2, 1) // rows))


def make_variant(design: Build) -> Variant:
    """The variant ``filter2d/opencl/best_R{rows}`` of ``design``."""
    rows = design.rows
    name = f"best_R{rows}"

    def constraint(problem, params):
        return (oc.check_local((params["wg_x"], 1), 0, (SRC, "filter2d_best", options(design, oc.target() == "nvidia"),
                                                        SRC_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, wg_x=64, arith="auto"):
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
        H, W = img.shape
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"filter2d/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        shift = problem.option("shift")
        build = specialise(design, problem, arith)
        k = oc.kernel(SRC, "filter2d_best", options(build, oc.target() == "nvidia"), SRC_NAME)
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
    return [make_variant(d) for d in SHIPPED]
