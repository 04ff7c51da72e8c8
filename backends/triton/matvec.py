"""matvec in Triton (seed 002's row-block reduction): one program per block of ``block_rows``
rows, the columns in masked blocks of ``block_cols``, each block reduced with ``tl.sum``."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels

ORIGIN = "seed 002 (Kim, Kim, Woo, Ihm: matrix-vector, one block per rows) in Triton; issue 25"
SUPPORTS = {"dtype": ("float32", "float64"), "rows": Range(1), "cols": Range(1)}
PARAMS = (Param("block_rows", (2, 4, 16, 64), 16), Param("block_cols", (4, 16, 32, 128), 32),
          Param("num_warps", (1, 2, 4, 8), 4))


def _run(problem, out, block_rows=16, block_cols=32, num_warps=4):
    m = np.ascontiguousarray(problem.inputs["m"])
    v = np.ascontiguousarray(problem.inputs["v"])
    R, C = m.shape
    return kit.launch(_kern().matvec_rows, (kit.cdiv(R, block_rows),), m, v, kit.OUT, R, C, out=out,
                      what="matvec/triton/row_block", num_warps=num_warps, BR=block_rows, BC=block_cols)


def _constraint(problem, p):
    d = problem.dims
    return kit.budget(kit.cdiv(d["rows"], p["block_rows"]), kit.cdiv(d["cols"], p["block_cols"]))


def variants() -> list[Variant]:
    return [Variant(op="matvec", backend="triton", name="row_block", run=_run, supports=SUPPORTS, params=PARAMS,
                    available=kit.available, constraint=_constraint, origin=ORIGIN,
                    doc="y[rows] = sum over column blocks of tl.sum(M[rows, cols] * v[cols], axis=1); "
                        "block_rows rows per program, the last row and column blocks masked")]
