"""matvec on OpenCL (seed 002): one work-item per row, one work-group per row with a __local
tree reduction, and one sub-group per row (only where the device has cl_khr_subgroups).

``thread_per_row`` and ``block_per_row`` are the twins of ``matvec/numba_cuda/*``: the same
default launch shape (thread_per_row: work-groups of 128, one work-item per row, as Numba's 128
threads; block_per_row: work-groups of 512, two per compute unit, as Numba's 512 threads and
2 x SMs blocks) and the same order of each work-item's sum (``matvec.cl``), so that ``refconv
bench`` compares the two backends on the same work."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc

SRC, SRC_NAME = oc.package_source("matvec.cl", __package__), "matvec.cl"

ORIGIN = "seed 002 (Kim, Kim, Woo, Ihm: CUDA optimisation techniques, matrix-vector section)"
SUPPORTS = {"dtype": ("float32", "float64"), "rows": Range(1), "cols": Range(1)}


def type_opts(dtype) -> tuple:
    """Build options for element type ``dtype``; float64 needs cl_khr_fp64."""
    if np.dtype(dtype) == np.float64:
        oc.require_fp64()
        return ("-DT=double",)
    return ("-DT=float",)


def _make(name, params, doc, available, extra=()):
    def opts(problem, wg):
        # block_per_row: the work-group size is a build-time constant (-DWG), as the Numba twin's threads
        return type_opts(problem.dims["dtype"]) + extra + ((f"-DWG={wg}",) if name == "block_per_row" else ())

    def constraint(problem, p):
        nbytes = p["wg"] * np.dtype(problem.dims["dtype"]).itemsize if name == "block_per_row" else 0
        isz = np.dtype(problem.dims["dtype"]).itemsize
        return (oc.check_local((p["wg"],), nbytes, (SRC, name, opts(problem, p["wg"]), SRC_NAME))
                or oc.fits_memory(problem, problem.dims["rows"] * isz))

    def run(problem, out, **p):
        m = np.ascontiguousarray(problem.inputs["m"])
        v = np.ascontiguousarray(problem.inputs["v"])
        R, C = m.shape
        wg = p["wg"]
        k = oc.kernel(SRC, name, opts(problem, wg), SRC_NAME)
        groups = p.get("groups")
        if groups is None:        # thread_per_row: one work-item per row
            groups = -(-R // wg)
        elif groups == 0:         # the default: two work-groups per compute unit
            groups = 2 * oc.device().max_compute_units
        args = [oc.to_device(m), oc.to_device(v), oc.OUT, np.int32(R), np.int32(C)]
        return oc.launch(k, (groups * wg,), (wg,), *args, out=out, what=f"matvec/opencl/{name}")

    avail = available
    if name == "warp_shuffle":
        def avail():
            r = available()
            if r is None and not oc.has_subgroups():
                return f"{oc.target()} device has no cl_khr_subgroups (sub_group_reduce_add)"
            return r
    return Variant(op="matvec", backend="opencl", name=name, run=run, supports=SUPPORTS, params=params,
                   available=avail, writes="all", constraint=constraint, origin=ORIGIN, doc=doc)


def variants():
    available = oc.available
    return [
        _make("thread_per_row", (Param("wg", (1, 2, 8, 32, 64, 128, 256), 128),),
              "one work-item per row (sequential dot product, four columns' loads issued before their "
              "adds); default work-groups of 128, the Numba twin's threads", available),
        _make("block_per_row", (Param("wg", (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), 512),
                                Param("groups", (0, 1, 2, 3, 7, 60), 0)),
              "one work-group per row, grid-stride over rows (groups; 0: two per compute unit), strided "
              "partial sums (four columns' loads issued before their adds) and a __local tree reduction "
              "with a barrier after every step; default wg 512 and two work-groups per compute unit, "
              "the Numba twin's 512 threads and 2 x SMs blocks", available),
        _make("warp_shuffle", (Param("wg", (32, 64, 128, 256), 128), Param("groups", (0, 1, 2, 7, 60), 0)),
              "groups work-groups (0: two per compute unit), one sub-group per row, sub_group_reduce_add "
              "(cl_khr_subgroups only)", available, extra=("-DUSE_SUBGROUPS",)),
    ]
