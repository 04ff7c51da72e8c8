"""conv2d on OpenCL (seed 004, cuconv): split (scalar_prods into a (R*S) x M x Ho x Wo partial
buffer, then a sum kernel; 1x1 filters skip the sum) and fused (the filter's C-long depth row
staged in __local memory per tap).  The int scalars go in one ``__constant int`` buffer; fused
is built per C (``-DCDEPTH``), as its Numba twin is compiled per C."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc
from .matvec import type_opts

SRC, SRC_NAME = oc.package_source("conv2d.cl", __package__), "conv2d.cl"

ORIGIN = "seed 004 (cuconv B.Sc. project: scalar_prods + sum kernels, fused kernel, filters [M][R][S][C])"
SUPPORTS = {"dtype": ("float32", "float64"), "groups": (1,), "n": Range(1), "c": Range(1),
            "h": Range(1), "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1),
            "bias": (0, 1), "stride": Range(1), "padding": Range(0), "dilation": Range(1)}
WG = (Param("wg", (1, 2, 8, 32, 64, 128, 256), 256),)


def _geometry(problem):
    x = np.ascontiguousarray(problem.inputs["x"])
    w = problem.inputs["w"]
    N, C, H, W = x.shape
    M, _, R, S = w.shape
    o = problem.options
    st, pd, dl = int(o.get("stride", 1)), int(o.get("padding", 0)), int(o.get("dilation", 1))
    Ho = (H + 2 * pd - dl * (R - 1) - 1) // st + 1
    Wo = (W + 2 * pd - dl * (S - 1) - 1) // st + 1
    f = np.ascontiguousarray(w.transpose(0, 2, 3, 1))          # [M][R][S][C]
    bias = problem.inputs.get("bias")
    return x, f, bias, (N, C, H, W, M, R, S, Ho, Wo, st, pd, dl)


def _ints(dims: tuple, has_bias: bool) -> list:
    """The kernels' int arguments from ``dims = (C, H, W, M, R, S, Ho, Wo, stride, pad, dilation)``."""
    C, H, W, M, R, S, Ho, Wo, st, pd, dl = dims
    return [int(v) for v in (C, H, W, M, R, S, Ho, Wo, st, st, pd, pd, dl, dl, has_bias)]


def _fused_opts(dtype, c: int) -> tuple:
    """fused's build options: the element type and C, a compile-time constant as in the Numba
    twin (which compiles its kernel per C): the depth loop's trip count is then known."""
    return type_opts(dtype) + (f"-DCDEPTH={int(c)}",)


def _run_split(problem, out, wg=256):
    x, f, bias, (N, C, H, W, M, R, S, Ho, Wo, st, pd, dl) = _geometry(problem)
    K = R * S
    direct = K == 1
    opts = type_opts(x.dtype) + (("-DDIRECT",) if direct else ())
    sp = oc.kernel(SRC, "scalar_prods", opts, SRC_NAME)
    bb = oc.to_device(bias if bias is not None else np.zeros(1, x.dtype))
    ints = _ints((C, H, W, M, R, S, Ho, Wo, st, pd, dl), bias is not None)
    gx = oc.roundup(Ho * Wo, wg)
    what = "conv2d/opencl/cuconv_split"
    if direct:
        return oc.launch(sp, (gx, N * M, 1), (wg, 1, 1), oc.to_device(x), oc.to_device(f), oc.OUT, bb,
                         oc.int_constants(ints), out=out, what=what)
    q = oc.env().queue
    sm = oc.kernel(SRC, "sum_partials", type_opts(x.dtype), SRC_NAME)
    part = oc.scratch(N * K * M * Ho * Wo * x.dtype.itemsize)
    with oc.output(out) as ob, oc.diagnosed(what, SRC_NAME):
        oc.timed(sp)(q, (gx, N * M, K), (wg, 1, 1), oc.to_device(x), oc.to_device(f), part, bb,
                     oc.int_constants(ints))
        oc.timed(sm)(q, (gx, N * M), (wg, 1), part, ob, bb, oc.int_constants((M, K, Ho * Wo, bias is not None)))
    return out


def _run_fused(problem, out, wg=256):
    import pyopencl as cl
    x, f, bias, (N, C, H, W, M, R, S, Ho, Wo, st, pd, dl) = _geometry(problem)
    k = oc.kernel(SRC, "fused", _fused_opts(x.dtype, C), SRC_NAME)
    bb = oc.to_device(bias if bias is not None else np.zeros(1, x.dtype))
    return oc.launch(k, (oc.roundup(Ho * Wo, wg), N * M), (wg, 1), oc.to_device(x), oc.to_device(f), oc.OUT, bb,
                     oc.int_constants(_ints((C, H, W, M, R, S, Ho, Wo, st, pd, dl), bias is not None)),
                     cl.LocalMemory(C * x.dtype.itemsize), out=out, what="conv2d/opencl/cuconv_fused")


def _constraint(kname):
    def constraint(problem, params):
        d = problem.dims
        opts = type_opts(d["dtype"]) if kname == "scalar_prods" else _fused_opts(d["dtype"], d["c"])
        if kname == "scalar_prods" and d["r"] * d["s"] == 1:
            opts += ("-DDIRECT",)
        local = (params["wg"], 1, 1) if kname == "scalar_prods" else (params["wg"], 1)
        nbytes = d["c"] * np.dtype(d["dtype"]).itemsize if kname == "fused" else 0
        pad = problem.option("padding")
        pad = max(pad) if isinstance(pad, tuple) else pad
        out = d["n"] * d["m"] * (d["h"] + 2 * pad) * (d["w"] + 2 * pad) * np.dtype(d["dtype"]).itemsize
        if kname == "scalar_prods":
            out *= 1 + d["r"] * d["s"]                 # the partial-products buffer
        return oc.check_local(local, nbytes, (SRC, kname, opts, SRC_NAME)) or oc.fits_memory(problem, out)
    return constraint


def variants():
    available = oc.available
    return [
        Variant(op="conv2d", backend="opencl", name="cuconv_split", run=_run_split, supports=SUPPORTS,
                params=WG, available=available, writes="all", constraint=_constraint("scalar_prods"),
                origin=ORIGIN,
                doc="scalar_prods: one work-item per (output pixel, image*filter, tap) computes the C-long "
                    "dot product into a (R*S) x M x Ho x Wo partial buffer; sum_partials adds the taps in "
                    "order (+ bias).  1x1 filters write the output directly (no sum)."),
        Variant(op="conv2d", backend="opencl", name="cuconv_fused", run=_run_fused, supports=SUPPORTS,
                params=WG, available=available, writes="all", constraint=_constraint("fused"),
                origin=ORIGIN,
                doc="one work-item per output pixel of one filter; per tap the filter's depth row is "
                    "staged in __local memory between two barriers; items past the end stay for the barriers."),
    ]
