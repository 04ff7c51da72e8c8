"""sobel on OpenCL (seed 002): global memory, four shared-memory tilings, texture + unrolling."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc

SRC, SRC_NAME = oc.package_source("sobel.cl", __package__), "sobel.cl"

ORIGIN = "seed 002 (Kim, Kim, Woo, Ihm: CUDA optimisation techniques, Sobel section)"
SUPPORTS = {"dtype": ("uint8",), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate", "wrap"), "rounding": ("trunc", "nearest-even")}
BUILD = ("-cl-fp32-correctly-rounded-divide-sqrt",)
WG = (Param("wg_x", (1, 2, 4, 8, 16, 32), 16), Param("wg_y", (1, 2, 4, 8, 16, 32), 16))


def _opts(problem):
    return BUILD + (f"-DCH={problem.dims['channels']}",)


def _scalars(problem, H, W):
    o = problem.option
    return [np.int32(x) for x in (H, W, o("magnitude") == "l2", o("rounding") == "nearest-even", o("cast") == "wrap")]


def _local_shape(name, params):
    if name == "smem_rows2":
        return (params["wg_x"], 2)
    return (params["wg_x"], params["wg_y"])


def _local_floats(name, params):
    bx, by = _local_shape(name, params)
    if name == "smem_rows2":
        return bx * 6
    return (bx + 2) * (by + 2) if name.startswith("smem") else 0


def _make(name, doc, available, params=WG, channels=(0, 3, 4)):
    def constraint(problem, p):
        bx, by = _local_shape(name, p)
        if name == "smem_4copy" and (bx < 2 or by < 2):
            return "smem_4copy needs a work-group of at least 2 x 2 (four copies must cover the tile)"
        if name == "smem_linear" and (bx + 2) * (by + 2) > 2 * bx * by:
            return "smem_linear copies 2 x wg cells: needs (bx+2)*(by+2) <= 2*bx*by"
        return (oc.check_local((bx, by), 4 * _local_floats(name, p), (SRC, name, _opts(problem), SRC_NAME))
                or oc.fits_memory(problem, problem.dims["h"] * problem.dims["w"]))

    def run(problem, out, **p):
        import pyopencl as cl
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape[:2]
        if out.shape != (H, W) or out.dtype != np.uint8:
            raise ValueError(f"sobel/opencl/{name}: output buffer {out.shape} {out.dtype}, expected ({H}, {W}) uint8")
        k = oc.kernel(SRC, name, _opts(problem), SRC_NAME)
        bx, by = _local_shape(name, p)
        if name == "smem_rows2":
            gsz = (max(1, -(-(W - 2) // (bx - 2))) * bx, -(-H // 4) * 2)
        else:
            gsz = (oc.roundup(W, bx), oc.roundup(H, by))
        if name == "unrolled":
            order = cl.channel_order.R if img.ndim == 2 else cl.channel_order.RGBA
            fmt = cl.ImageFormat(order, cl.channel_type.UNSIGNED_INT8)
            src = cl.create_image(oc.env().ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, fmt,
                                  shape=(W, H), hostbuf=img)
        else:
            src = oc.to_device(img)
        args = [src, oc.OUT] + _scalars(problem, H, W)
        if name.startswith("smem"):
            args.append(cl.LocalMemory(4 * _local_floats(name, p)))
        return oc.launch(k, gsz, (bx, by), *args, out=out, what=f"sobel/opencl/{name}")

    avail = available
    if name == "unrolled":
        def avail():
            r = available()
            if r is None and not oc.device().image_support:
                return f"{oc.target()} device has no image support (unrolled reads through image2d_t)"
            return r
    sup = dict(SUPPORTS, channels=channels)
    return Variant(op="sobel", backend="opencl", name=name, run=run, supports=sup, params=params,
                   available=avail, writes="interior", constraint=constraint, origin=ORIGIN, doc=doc)


def variants():
    available = oc.available
    return [
        _make("gmem", "every tap from __global memory, masks in __constant, gray conversion per tap", available),
        _make("smem_if", "method I: (wg+2)^2 gray tile in __local, halo and corners copied by edge/corner items (ifs)",
              available),
        _make("smem_4copy", "method II: tile filled by four block-sized copies, a barrier after each (they overlap)",
              available),
        _make("smem_linear", "method III: tile filled linearly, two copies per item (div/mod indexing)", available),
        _make("smem_rows2", "method IV: work-group wg_x x 2, a wg_x x 6 tile in three copies, 4 output rows and "
              "wg_x-2 columns per group, last two columns' results discarded", available,
              params=(Param("wg_x", (3, 4, 8, 16, 32, 64, 128, 256), 64),)),
        _make("unrolled", "texture + unrolling: the image read through an OpenCL image2d_t (CL_R / CL_RGBA "
              "UNSIGNED_INT8, sampler-less integer-coordinate reads), every tap written out", available, channels=(0, 4)),
    ]
