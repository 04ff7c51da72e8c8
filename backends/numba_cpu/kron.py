"""kron: the Kronecker paper's serial four-loop product (seed 003, section 4, Algoritma 3).

The paper stores every matrix row-major as a 1-D array and computes each element of the
(m·p)×(n·q) result once, in four nested loops with one multiplication in the innermost one::

    K[(i·p + k)·(n·q) + j·q + l] = A[i·n + j] · B[k·q + l]

The loop order is a launch parameter: ``ikjl`` walks the result in row-major order (the
paper's order), ``ijkl`` writes it block by block (one p×q block ``A[i,j]·B`` at a time).
Every element is a single product, so the result is exact in any real dtype (integer products
wrap exactly like NumPy's when the output dtype is narrow).
"""
from __future__ import annotations

import numpy as np

from refconv import Param, Variant

from . import NAME
from ._util import c_array, c_target, check_out, njit

LOOP_ORDERS = ("ikjl", "ijkl")


@njit
def _kron(a, b, out, order):
    m, n = a.shape
    p, q = b.shape
    flat = out.reshape(-1)          # the paper's 1-D row-major result
    nq = n * q
    if order == 0:                  # i, k, j, l: row-major walk over the result
        for i in range(m):
            for k in range(p):
                row = (i * p + k) * nq
                for j in range(n):
                    aij = a[i, j]
                    for l in range(q):
                        flat[row + j * q + l] = aij * b[k, l]
    else:                           # i, j, k, l: one p×q block A[i,j]·B at a time
        for i in range(m):
            for j in range(n):
                aij = a[i, j]
                for k in range(p):
                    row = (i * p + k) * nq + j * q
                    for l in range(q):
                        flat[row + l] = aij * b[k, l]
    return out


def run(problem, out, loop_order="ikjl"):
    a = c_array(problem.inputs["a"])
    b = c_array(problem.inputs["b"])
    check_out(out, (a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]), "kron")
    with c_target(out) as target:
        _kron(a, b, target, LOOP_ORDERS.index(loop_order))
    return out


def variants():
    return [
        Variant(
            op="kron", backend=NAME, name="serial_4loop", run=run,
            supports={"dtype": ("float64", "float32", "int32", "uint8")},
            params=(Param("loop_order", LOOP_ORDERS, "ikjl"),),
            origin="seed 003, section 4 (Seri Algoritma, Algoritma 3)",
            doc="K[(i*p+k), (j*q+l)] = A[i,j] * B[k,l]; four nested loops, one product per element",
        )
    ]
