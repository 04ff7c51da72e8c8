"""matvec: the CPU row loop of seed 002's matrix–vector section (one dot product per row, the
serial counterpart of its "thread per row" kernel).

``y[i] = sum_j M[i, j] · v[j]``, accumulated in the input dtype.  Launch parameters:
``row_block`` groups rows the way a CUDA block groups threads (same result, different walk), and
``lanes`` splits each dot product into that many interleaved partial sums (j ≡ lane mod lanes)
combined at the end, as a vectorised CPU loop or a warp reduction would — a different summation
order, which the spec's tolerance bound must cover.
"""
from __future__ import annotations

import numpy as np

from refconv import Param, Variant

from . import NAME
from ._util import c_array, check_out, njit


@njit
def _matvec(m, v, out, row_block, lanes):
    rows, cols = m.shape
    acc = np.empty(lanes, dtype=m.dtype)
    for r0 in range(0, rows, row_block):
        for i in range(r0, min(r0 + row_block, rows)):
            for t in range(lanes):
                acc[t] = 0
            for j in range(cols):
                acc[j % lanes] += m[i, j] * v[j]
            s = acc[0]
            for t in range(1, lanes):
                s += acc[t]
            out[i] = s
    return out


def run(problem, out, row_block=8, lanes=1):
    m = c_array(problem.inputs["m"])
    v = c_array(problem.inputs["v"])
    check_out(out, (m.shape[0],), "matvec")
    _matvec(m, v, out, row_block, lanes)
    return out


def variants():
    return [
        Variant(
            op="matvec", backend=NAME, name="row_loop", run=run,
            supports={"dtype": ("float32", "float64")},
            params=(Param("row_block", (1, 3, 8), 8), Param("lanes", (1, 4), 1)),
            origin="seed 002, matrix-vector section (thread per row), serial CPU form",
            doc="y[i] = sum_j M[i,j] * v[j], row by row, accumulated in the input dtype",
        )
    ]
