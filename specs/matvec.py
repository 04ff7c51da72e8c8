"""``matvec``: matrix-vector product."""
from __future__ import annotations

import numpy as np

from ._validate import as_array


def resolve(m, v):
    op = "matvec"
    m = as_array("m", m, ndims=2, dtypes=("float32", "float64"), op=op)
    v = as_array("v", v, ndims=1, dtypes=("float32", "float64"), op=op)
    if v.dtype != m.dtype:
        raise TypeError(f"{op}: v has dtype {v.dtype.name} but m has {m.dtype.name}; accepted: the same dtype")
    if m.shape[1] != v.shape[0]:
        raise ValueError(f"{op}: m has shape {m.shape} and v has shape {v.shape}; accepted: "
                         f"v.shape == (m.shape[1],) = ({m.shape[1]},)")
    if 0 in m.shape:
        raise ValueError(f"{op}: m must be non-empty, got shape {m.shape}")
    return dict(m=m, v=v)


def matvec(m, v):
    r"""``y = m @ v``: ``m`` ``(R, C)``, ``v`` ``(C,)``, same dtype float32 or float64;
    ``y[r] = sum_c m[r, c] * v[c]`` of shape ``(R,)`` and the same dtype.

    **Point value.** Computed in float64 (in an unspecified order) and rounded once to the dtype
    (for float32: the exact dot product correctly rounded up to a float64-level error).  The
    tolerance accepts any summation order and FMA contraction (``n = C`` terms); NaN/Inf
    propagate as IEEE arithmetic does.
    """
    a = resolve(m, v)
    with np.errstate(all="ignore"):
        return (a["m"].astype(np.float64) @ a["v"].astype(np.float64)).astype(a["m"].dtype)
