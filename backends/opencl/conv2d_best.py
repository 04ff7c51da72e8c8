"""conv2d on OpenCL: refconv's own fastest kernel (issue #24), ``conv2d/opencl/best``, the twin of
``conv2d/numba_cuda/best`` (same algorithm, same launch plan: ``refconv.backends.conv2d_gemm``).

Implicit GEMM ``out[m, q] = bias[m] + sum_k A[k, m] B[k, q]`` (``k = (c, r, s)``, ``q`` = output
pixel of image n, A = the filters K-major ``[Kpad][Mpad]`` laid out on the host, B the im2col
gather done while staging): ``BM x BN`` work-group tiles, ``TM x TN`` register micro-tiles,
``BK``-deep double-buffered ``__local`` K slices; split-K into a partial buffer summed in order by
``reduce_split`` (+ bias) (no fused reduction here, unlike the Numba twin: see :data:`REDUCES`);
``path`` ``auto``: the 1x1 path (``-DONE=1``, ``B[k, q] = x[n*CHW + k*HoWo + p]``, no
table) where the filter is 1x1, stride 1, unpadded.  Tile sizes are ``-D`` build options
(``conv2d_best.cl``).
"""
from __future__ import annotations

import numpy as np

from refconv import opencl as oc
from refconv.backends import conv2d_gemm as G
from refconv.variant import Param, Range, Variant

from .matvec import type_opts

SRC, SRC_NAME = oc.package_source("conv2d_best.cl", __package__), "conv2d_best.cl"
ORIGIN = ("refconv (issue #24): implicit GEMM, register micro-tiles, double-buffered local K slices, "
          "split-K with a deterministic reduction; spec of seed 004 (not a seed design)")
SUPPORTS = {"dtype": ("float32", "float64"), "groups": (1,), "n": Range(1), "c": Range(1),
            "h": Range(1), "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1),
            "bias": (0, 1), "stride": Range(1), "padding": Range(0), "dilation": Range(1)}
#: no ``fused``: the last work-group's reading of the other groups' partials after
#: ``mem_fence(CLK_GLOBAL_MEM_FENCE)`` is not ordered across work-groups in OpenCL 1.2, and on an H100
#: (NVIDIA OpenCL) it failed the check on cuconv-T3-1x1-C (16 of 186624 elements)
REDUCES = ("auto", "kernel")
PARAMS = (Param("tile", ("auto",) + tuple(G.TILES), "auto"), Param("split", ("auto",) + G.SPLITS, "auto"),
          Param("path", G.PATHS, "auto"), Param("reduce", REDUCES, "auto"))
REDUCE_WG = 256
WHAT = "conv2d/opencl/best"


def options(dtype, t: G.Tile, one: bool = False) -> tuple:
    return type_opts(dtype) + (f"-DBM={t.bm}", f"-DBN={t.bn}", f"-DTM={t.tm}", f"-DTN={t.tn}", f"-DBK={t.bk}",
                               f"-DONE={int(one)}")


def _scalars(values):
    """The kernels' int scalars as one ``__constant int`` buffer (:func:`refconv.opencl.int_constants`):
    ``gemm`` takes ``G.kernel_ints`` then ``has_bias`` and ``direct``; ``reduce_split`` (M, NQ, HoWo,
    split, has_bias)."""
    return oc.int_constants(values)


def run(problem, out, tile="auto", split="auto", path="auto", reduce="auto"):
    if reduce not in REDUCES:
        raise ValueError(f"conv2d/opencl/best: reduce={reduce!r} not accepted; accepted: {REDUCES} (the fused "
                         "split-K reduction is Numba-only: OpenCL 1.2 has no device-scope fence)")
    g = G.geometry(problem)
    dt = np.dtype(problem.dims["dtype"])
    p = G.plan(g, tile, split, dt.itemsize, path, reduce)
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    t = p.tile
    k = oc.kernel(SRC, "gemm", options(dt, t, p.one), SRC_NAME)
    gsize, lsize = (p.grid[0] * t.thx, p.grid[1] * t.thy, p.split), (t.thx, t.thy, 1)
    ints = list(G.kernel_ints(g, p))
    args = (oc.to_device(a), oc.to_device(x), oc.to_device(ktab))
    bb = oc.to_device(bias)
    if p.split == 1:
        return oc.launch(k, gsize, lsize, *args, oc.scratch(dt.itemsize), oc.OUT, bb, oc.scratch(4),
                         _scalars(ints + [has_bias, 1]), out=out, what=WHAT)
    part = oc.scratch(G.partial_elements(g, p) * dt.itemsize)
    red = oc.kernel(SRC, "reduce_split", options(dt, t, p.one), SRC_NAME)     # the same program
    q = oc.env().queue
    with oc.output(out) as ob, oc.diagnosed(WHAT, SRC_NAME):
        oc.timed(k)(q, gsize, lsize, *args, part, ob, bb, oc.scratch(4), _scalars(ints + [has_bias, 0]))
        oc.timed(red)(q, (oc.roundup(g.M * g.NQ, REDUCE_WG),), (REDUCE_WG,), part, bb, ob,
                      _scalars([g.M, g.NQ, g.Ho * g.Wo, p.split, has_bias]))
    return out


def constraint(problem, params):
    """The device limits: the tile's work-group (and the kernel's own limit), its two stage
    buffers in __local memory, x, A, the table, the output and the partials in device memory."""
    g = G.geometry(problem)
    if g.Ho < 1 or g.Wo < 1:                  # the spec refuses it too
        return f"empty output ({g.Ho}x{g.Wo})"
    dt = np.dtype(problem.dims["dtype"])
    p = G.plan(g, params.get("tile", "auto"), params.get("split", "auto"), dt.itemsize,
               params.get("path", "auto"), params.get("reduce", "auto"))
    t = p.tile
    nbytes = (g.N * g.C * g.H * g.W + p.kpad * p.mpad + g.M * g.NQ + G.partial_elements(g, p)) * dt.itemsize
    return (G.index_limit(g, p)
            or oc.check_local((t.thx, t.thy, 1), t.shared_bytes(dt.itemsize),
                              (SRC, "gemm", options(dt, t, p.one), SRC_NAME))
            or oc.fits_memory(problem, nbytes + 12 * p.kpad + 4 * G.counters(p)))


def variants():
    return [Variant(
        op="conv2d", backend="opencl", name="best", run=run, supports=dict(SUPPORTS), params=PARAMS,
        available=oc.available, writes="all", constraint=constraint, origin=ORIGIN,
        doc="implicit GEMM out[m, q] = sum_k A[k, m] B[k, q] (k = (c, r, s), q = output pixel of image n; "
            "filters K-major on the host, the im2col gather B done while staging): BM x BN work-group tiles, "
            "TM x TN register micro-tiles, BK-deep double-buffered __local slices; split-K into a partial "
            "buffer summed in order (+bias) by a second kernel (no fused reduction: OpenCL 1.2 has no "
            "device-scope fence); path 'auto': 1x1 stride-1 unpadded filters read "
            "B[k, q] = x[n, k, p] with no gather table; tile, split and reduce 'auto' from a cost model "
            "of the problem size (the plan of conv2d/numba_cuda/best)")]
