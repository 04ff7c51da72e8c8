"""The arithmetic path of the ``best_R{R}`` filter2d kernels (numba_cuda and OpenCL twins), chosen on
the host from the weights: pure NumPy, shared by both backends so that the twins always take the
same path.  The paths (``cvt``, ``magic``, ``exact``) give the spec's bits; see
``refconv.backends.numba_cuda.filter2d_best`` for what each computes and why it is exact.
"""
from __future__ import annotations

import numpy as np

PATHS = ("cvt", "magic", "exact", "int")
ARITH = ("auto", "cvt", "int")


def choose_path(w: np.ndarray, arith: str = "auto") -> str:
    """The arithmetic path for float32 weights ``w`` (see the module doc): ``cvt`` unless the
    bound ``B = 255 * sum|w|`` (with slack for the roundings) keeps every partial sum below 2**22;
    then ``exact`` when the smallest ``k`` with every ``w * 2**k`` an integer has ``B * 2**k < 2**23``,
    else ``magic``.  ``arith="int"`` (the numba twin only) turns ``exact`` into ``int``: the same
    sums in integers of ``2**-k`` (:func:`dyadic_exponent`); other weights take the ``auto`` path."""
    if arith not in ARITH:
        raise ValueError(f"arith={arith!r} not accepted; accepted: {', '.join(repr(a) for a in ARITH)}")
    w = np.asarray(w, np.float64).reshape(-1)
    if arith == "cvt" or not np.all(np.isfinite(w)):
        return "cvt"
    bound = 255.0 * float(np.abs(w).sum()) * (1 + 2.0 ** -20) + 1.0
    if bound >= 2.0 ** 22:
        return "cvt"
    k = dyadic_exponent(w)
    if k is None:
        return "magic"
    if bound * 2.0 ** k >= 2.0 ** 23:
        return "magic"
    return "int" if arith == "int" else "exact"


def dyadic_exponent(w: np.ndarray) -> int | None:
    """The smallest ``k`` in 0..24 with every ``w * 2**k`` an integer (None if there is none)."""
    w = np.asarray(w, np.float64).reshape(-1)
    for k in range(25):
        scaled = w * 2.0 ** k
        if np.all(scaled == np.floor(scaled)):
            return k
    return None
