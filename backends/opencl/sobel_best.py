"""sobel on OpenCL: refconv's own fastest kernels (issue #24), ``best_R{R}``, the twins of
``sobel/numba_cuda/best_R{R}`` (``sobel_best.cl``): a work-item computes 8 output columns x ``R``
output rows from register-held gray rows, the next input row's loads issued before the current row's
arithmetic; an RGBA row with ``W % 8 == 0`` is two 16-byte loads per work-item (and two 4-byte halo
loads) and the 8 outputs one 8-byte store where the chunk is interior; spec arithmetic bit for bit.

A channel byte becomes ``2**23 + x`` as ``as_float(0x4B000000 | x)`` and its gray product one fma on
it (``fma(C, 2**23 + x, -C * 2**23) = rn(C*x)``); on NVIDIA (``-DUSE_PTX``) the byte to float is one
PTX byte permute and the truncating, saturating output ``rz(min(m, 255) + 2**23)`` (``add.rz.f32``,
the low byte), elsewhere portable OpenCL C giving the same bits.

What a kernel is built from is one frozen :class:`Build` (the design's ``rows`` and register cap, and
what the host picks for a problem); the shipped designs are :data:`BEST_R1`, :data:`BEST_R2`,
:data:`BEST_R4` and :data:`BEST_R8`, :func:`make_variant` makes a variant of any design (the lab's
sweeps pass theirs), :func:`options` gives a build's build options and ``docs/kernels/`` holds the
preset's (``tests/test_kernel_sources.py``)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from refconv import opencl as oc
from refconv.variant import Param, Range, Variant

from ._source import shared_source


SRC_NAME = "sobel_best.cl"
SRC = shared_source("pack4.cl", SRC_NAME)
#: work-items a group by default: on the sobel preset best_R8 was about a third faster with 256
#: than with 64 (lab/sweeps/gpu_roofline_sweep.py)
WG_X = 256
ORIGIN = "refconv (issue #24): register-blocked rows, 16-byte loads per work-item; spec of seed 002"
#: output columns a work-item computes (the Numba twin's COLS)
COLS = 8
SUPPORTS = {"dtype": ("uint8",), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate",), "rounding": ("trunc",)}


@dataclass(frozen=True)
class Build:
    """One kernel build: the design's ``rows`` (output rows a work-item computes; each R is a kernel of
    its own) and ``max_registers`` (a cap on a work-item's registers on NVIDIA,
    ``-cl-nv-maxrregcount``; None: the compiler's choice), and what the host picks for a problem
    (:func:`specialise`): ``ch``, the image's channels (0: gray, 3: RGB, 4: RGBA), ``l2``, the L2
    magnitude (else L1), and ``vec``, the word layout (RGBA with ``W % 8 == 0``)."""

    rows: int
    ch: int = 0
    l2: bool = False
    vec: bool = False
    max_registers: int | None = None


#: the shipped designs, ``sobel/opencl/best_R1`` .. ``best_R8``
BEST_R1 = Build(rows=1)
BEST_R2 = Build(rows=2)
BEST_R4 = Build(rows=4)
BEST_R8 = Build(rows=8)
SHIPPED = (BEST_R1, BEST_R2, BEST_R4, BEST_R8)


def options(build: Build, nvidia: bool) -> tuple:
    """The build options of ``build`` (correctly rounded sqrt for the L2 magnitude; ``nvidia``: for
    NVIDIA's OpenCL, ``-DUSE_PTX``)."""
    b = build
    opts = ("-cl-fp32-correctly-rounded-divide-sqrt", f"-DROWS={b.rows}", f"-DCH={b.ch}", f"-DL2={int(b.l2)}",
            f"-DVEC={int(b.vec)}")
    if nvidia and b.max_registers is not None:
        opts += (f"-cl-nv-maxrregcount={b.max_registers}",)
    return opts + (("-DUSE_PTX",) if nvidia else ())


def specialise(design: Build, problem) -> Build:
    """``design`` specialised for ``problem``: its channels, its magnitude and the layout (16-byte rows
    for RGBA with ``W % 8 == 0``, else bytes)."""
    img = problem.inputs["image"]
    ch = 0 if img.ndim == 2 else img.shape[2]
    return dataclasses.replace(design, ch=ch, l2=problem.option("magnitude") == "l2",
                               vec=ch == 4 and img.shape[1] % COLS == 0)


def _global(H: int, W: int, rows: int, wg_x: int) -> tuple:
    return (oc.roundup(-(-W // COLS), wg_x), -(-max(H - 2, 1) // rows))


def make_variant(design: Build) -> Variant:
    """The variant ``sobel/opencl/best_R{rows}`` of ``design`` (a :data:`SHIPPED` one, or a lab's own,
    e.g. another row count or a register cap)."""
    rows = design.rows
    name = f"best_R{rows}"

    def constraint(problem, params):
        # the work-group limit of the problem's channels, byte layout and L1 build
        opts = options(dataclasses.replace(design, ch=problem.dims["channels"], l2=False, vec=False),
                       oc.target() == "nvidia")
        return (oc.check_local((params["wg_x"], 1), 0, (SRC, "sobel_best", opts, SRC_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, wg_x=WG_X):
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape[:2]
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"sobel/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        build = specialise(design, problem)
        k = oc.kernel(SRC, "sobel_best", options(build, oc.target() == "nvidia"), SRC_NAME)
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
    return [make_variant(d) for d in SHIPPED]
