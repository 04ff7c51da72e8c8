"""filter2d on OpenCL: the 3x3 uint8 kernels of seed 000 (GM / CM / SM, coarsened, vector
stores; one ``filter2d_3x3.cl`` specialised with ``-D``) and PMPP's float32 tiled convolution of
seed 001 (``basic``, ``tiled_halo``; ``filter2d_pmpp.cl``)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc

SRC_3X3, SRC_3X3_NAME = oc.package_source("filter2d_3x3.cl", __package__), "filter2d_3x3.cl"
SRC_PMPP, SRC_PMPP_NAME = oc.package_source("filter2d_pmpp.cl", __package__), "filter2d_pmpp.cl"

CFS = (2, 4, 8, 12, 16)
MEMS = ("GM", "CM", "SM")

SUPPORTS_3X3 = {
    "dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",), "flip": (False,),
    "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap", "saturate"), "rounding": ("trunc",),
    "out_dtype": (None,), "h": Range(3), "w": Range(3),
}
SUPPORTS_PMPP = {
    "dtype": ("float32",), "c": Range(0), "kh": Range(1), "kw": Range(1),
    "boundary": ("zero",), "flip": (False,), "accumulator": ("float32",), "out_dtype": (None,),
    "h": Range(1), "w": Range(1),
}
ORIGIN_000 = "seed 000 (Ozer & Demirci, 3x3 convolution on CUDA: GM/CM/SM, coarsening, uchar4 stores)"
ORIGIN_001 = "seed 001 (PMPP tiled 2-D convolution with halo cells, blog notes)"


# ----------------------------------------------------------------------------- 3x3 uint8

#: the targets whose ``convert_int_sat_rtz`` follows OpenCL C (saturates, NaN -> 0), so the kernel's
#: float-to-int of a tap is that one conversion (``-DNATIVE_F2I=1``).  Oclgrind 21.10 gives INT_MIN
#: for NaN (tests/test_opencl_filter2d_3x3.py probes each installed target); elsewhere the kernel
#: writes the NaN case out.
NATIVE_F2I_TARGETS = ("pocl", "nvidia")


def _opts_3x3(mem: str, cf: int, vec: bool, wg_x: int, wg_y: int) -> tuple:
    """Build options: the variant, the launch's work-group shape (compile-time, as the Numba twin's
    block shape) and whether the target's ``convert_int_sat_rtz`` is the spec's conversion."""
    native = int(oc.target() in NATIVE_F2I_TARGETS)
    return (f"-DMEM_{mem}", f"-DCF={cf}", f"-DVEC={int(vec)}", f"-DWG_X={wg_x}", f"-DWG_Y={wg_y}",
            f"-DNATIVE_F2I={native}")


def _make_3x3(mem: str, cf: int, vec: bool, available) -> Variant:
    name = mem + (f"_CF{cf}" if cf > 1 else "") + ("_Vec" if vec else "")

    def local_bytes(wx, wy):
        return (wx * cf + 2) * (wy + 2) + 9 * 4 if mem == "SM" else 0

    def constraint(problem, params):
        wx, wy = params["wg_x"], params["wg_y"]
        return (oc.check_local((wx, wy), local_bytes(wx, wy),
                               (SRC_3X3, "filter2d_3x3", _opts_3x3(mem, cf, vec, wx, wy), SRC_3X3_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, wg_x=32, wg_y=8):
        import pyopencl as cl
        img = problem.inputs["image"]
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32)
        H, W = img.shape
        shift = int(problem.option("shift"))
        sat = int(problem.option("cast") == "saturate")
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"filter2d/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        k = oc.kernel(SRC_3X3, "filter2d_3x3", _opts_3x3(mem, cf, vec, wg_x, wg_y), SRC_3X3_NAME)
        gx = oc.roundup(-(-W // cf), wg_x)
        gy = oc.roundup(H, wg_y)
        prm = oc.int_constants((H, W, shift, sat))
        args = [oc.to_device(img), oc.to_device(w), oc.OUT, prm]
        if mem == "SM":
            args += [cl.LocalMemory((wg_x * cf + 2) * (wg_y + 2)), cl.LocalMemory(9 * 4)]
        return oc.launch(k, (gx, gy), (wg_x, wg_y), *args, out=out, what=f"filter2d/opencl/{name}")

    what = {"GM": "weights in __global memory", "CM": "weights in __constant memory",
            "SM": "image tile and weights staged in __local memory (one barrier)"}[mem]
    doc = (f"3x3 uint8 filter, {what}"
           + (f"; coarsened x{cf} along x with a sliding register window" if cf > 1 else "; one output per work-item")
           + ("; outputs stored with vstore4 (vstore2 for CF=2) where aligned and interior, scalar at the edges" if vec else "")
           + f".  Build options: -DMEM_{mem} -DCF={cf} -DVEC={int(vec)}, the work-group shape"
           " (-DWG_X, -DWG_Y) and -DNATIVE_F2I (1 where the target's convert_int_sat_rtz maps NaN to 0);"
           " H, W, shift, sat in one __constant int buffer.")
    return Variant(
        op="filter2d", backend="opencl", name=name, run=run, supports=SUPPORTS_3X3,
        params=(Param("wg_x", (1, 2, 4, 8, 16, 32, 64), 32), Param("wg_y", (1, 2, 4, 8, 16, 32), 8)),
        available=available, writes="interior", constraint=constraint, origin=ORIGIN_000, doc=doc)


# ----------------------------------------------------------------------------- PMPP float32

def _pmpp_common(problem):
    img = np.ascontiguousarray(problem.inputs["image"], dtype=np.float32)
    w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32)
    C = 1 if img.ndim == 2 else img.shape[0]
    H, W = img.shape[-2:]
    KH, KW = w.shape
    return img, w, C, H, W, KH, KW


def _run_basic(problem, out, wg_x=16, wg_y=16):
    img, w, C, H, W, KH, KW = _pmpp_common(problem)
    k = oc.kernel(SRC_PMPP, "basic", (), SRC_PMPP_NAME)
    return oc.launch(k, (oc.roundup(W, wg_x), oc.roundup(H, wg_y), C), (wg_x, wg_y, 1),
                     oc.to_device(img), oc.to_device(w), oc.OUT, *map(np.int32, (H, W, KH, KW, KH // 2, KW // 2)),
                     out=out, what="filter2d/opencl/basic")


def _constraint_basic(problem, params):
    return (oc.check_local((params["wg_x"], params["wg_y"], 1), 0, (SRC_PMPP, "basic", (), SRC_PMPP_NAME))
            or oc.fits_memory(problem, 4 * max(problem.dims["c"], 1) * problem.dims["h"] * problem.dims["w"]))


def _tile(problem, o_tile):
    return o_tile + problem.dims["kw"] - 1, o_tile + problem.dims["kh"] - 1


def _run_tiled(problem, out, o_tile=16):
    import pyopencl as cl
    img, w, C, H, W, KH, KW = _pmpp_common(problem)
    tw, th = o_tile + KW - 1, o_tile + KH - 1
    k = oc.kernel(SRC_PMPP, "tiled_halo", (), SRC_PMPP_NAME)
    gx, gy = -(-W // o_tile), -(-H // o_tile)
    return oc.launch(k, (gx * tw, gy * th, C), (tw, th, 1), oc.to_device(img), oc.to_device(w), oc.OUT,
                     *map(np.int32, (H, W, KH, KW, KH // 2, KW // 2, o_tile)), cl.LocalMemory(tw * th * 4),
                     out=out, what="filter2d/opencl/tiled_halo")


def _constraint_tiled(problem, params):
    tw, th = _tile(problem, params["o_tile"])
    return (oc.check_local((tw, th, 1), tw * th * 4, (SRC_PMPP, "tiled_halo", (), SRC_PMPP_NAME))
            or oc.fits_memory(problem, 4 * max(problem.dims["c"], 1) * problem.dims["h"] * problem.dims["w"]))


def variants() -> list[Variant]:
    available = oc.available
    vs = [_make_3x3(m, 1, False, available) for m in MEMS]
    vs += [_make_3x3(m, cf, False, available) for m in MEMS for cf in CFS]
    vs += [_make_3x3(m, cf, True, available) for m in MEMS for cf in CFS]
    vs.append(Variant(
        op="filter2d", backend="opencl", name="basic", run=_run_basic, supports=SUPPORTS_PMPP,
        params=(Param("wg_x", (1, 2, 4, 8, 16, 32), 16), Param("wg_y", (1, 2, 4, 8, 16, 32), 16)),
        available=available, writes="all", constraint=_constraint_basic, origin=ORIGIN_001,
        doc="float32 2-D correlation, zero ghost cells, one output per work-item, mask in __constant, "
            "channels on NDRange dimension 2; anchor (kh/2, kw/2)."))
    vs.append(Variant(
        op="filter2d", backend="opencl", name="tiled_halo", run=_run_tiled, supports=SUPPORTS_PMPP,
        params=(Param("o_tile", (1, 2, 4, 8, 16, 24, 32), 16),),
        available=available, writes="all", constraint=_constraint_tiled, origin=ORIGIN_001,
        doc="PMPP tiled convolution: work-group = input tile (o_tile+kw-1) x (o_tile+kh-1) loaded into "
            "__local memory (ghost cells 0) behind a barrier; only the o_tile x o_tile corner items write."))
    return vs
