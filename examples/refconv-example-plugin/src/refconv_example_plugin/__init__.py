"""refconv-example-plugin: a minimal third-party refconv backend.

Two pure-NumPy variants, each with one launch parameter:

* ``matvec/example/numpy_rows``  ``y = M @ v`` computed ``row_block`` rows at a time;
* ``kron/example/outer_reshape`` ``kron(A, B)`` as an outer product reshaped to (m·p)×(n·q),
  built either with ``np.multiply.outer`` or with ``np.einsum`` (``method``).

Installed, it is found through the ``refconv.backends`` entry point declared in pyproject.toml::

    pip install -e examples/refconv-example-plugin
    refconv list --backend example
    refconv check --backend example
"""
from __future__ import annotations

import numpy as np

from refconv import Backend, Param, Variant

__all__ = ["backend"]

NAME = "example"


# ----------------------------------------------------------------------------- matvec

def matvec_numpy_rows(problem, out, row_block=64):
    """y[i] = sum_j M[i, j] * v[j], ``row_block`` rows per NumPy matmul call."""
    m, v = problem.inputs["m"], problem.inputs["v"]
    with np.errstate(all="ignore"):  # the checker draws Inf/NaN/extreme inputs on purpose
        for r0 in range(0, m.shape[0], row_block):
            r1 = min(r0 + row_block, m.shape[0])
            np.matmul(m[r0:r1], v, out=out[r0:r1])
    return out


# ----------------------------------------------------------------------------- kron

def kron_outer_reshape(problem, out, method="outer"):
    """K[i*p + k, j*q + l] = A[i, j] * B[k, l]: the 4-D outer product A[i,j]·B[k,l] with axes
    reordered to (i, k, j, l) and reshaped to (m·p, n·q)."""
    a, b = problem.inputs["a"], problem.inputs["b"]
    (m, n), (p, q) = a.shape, b.shape
    with np.errstate(all="ignore"):  # Inf*0 and integer wrap-around are the spec's behaviour too
        if method == "outer":
            t = np.multiply.outer(a, b)              # [i, j, k, l]
            t = t.transpose(0, 2, 1, 3)              # [i, k, j, l]
        else:
            t = np.einsum("ij,kl->ikjl", a, b)
    out[...] = t.reshape(m * p, n * q)               # cast to the output dtype (as np.kron does)
    return out


def _variants():
    return [
        Variant(
            op="matvec", backend=NAME, name="numpy_rows", run=matvec_numpy_rows,
            supports={"dtype": ("float32", "float64")},
            params=(Param("row_block", (1, 7, 64), 64),),
            origin="refconv example plugin",
            doc="y[r0:r1] = M[r0:r1] @ v for each block of row_block rows",
        ),
        Variant(
            op="kron", backend=NAME, name="outer_reshape", run=kron_outer_reshape,
            supports={"dtype": ("float64", "float32", "int32", "uint8")},
            params=(Param("method", ("outer", "einsum"), "outer"),),
            origin="refconv example plugin",
            doc="K = outer(A, B).transpose(0, 2, 1, 3).reshape(m*p, n*q)",
        ),
    ]


backend = Backend(
    name=NAME,
    variants=_variants,
    describe=lambda: f"pure NumPy {np.__version__} on the host CPU",
)
