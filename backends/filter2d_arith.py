"""The arithmetic path of the ``best_R{R}`` filter2d kernels (numba_cuda and OpenCL twins), chosen on
the host from the weights: pure NumPy, shared by both backends so that the twins always take the
same path.  The paths (``cvt``, ``magic``, ``exact``) give the spec's bits; see
``refconv.backends.numba_cuda.filter2d_best`` for what each computes and why it is exact.
"""
from __future__ import annotations

import numpy as np

PATHS = ("cvt", "magic", "exact")
ARITH = ("auto", "cvt")


def choose_path(w: np.ndarray, arith: str = "auto") -> str:
    """The arithmetic path for float32 weights ``w`` (see the module doc): ``cvt`` unless the
    bound ``B = 255 * sum|w|`` (with slack for the roundings) keeps every partial sum below 2**22;
    then ``exact`` when the smallest ``k`` with every ``w * 2**k`` an integer has ``B * 2**k < 2**23``,
    else ``magic``."""
    if arith not in ("auto", "cvt"):
        raise ValueError(f"arith={arith!r} not accepted; accepted: 'auto', 'cvt'")
    w = np.asarray(w, np.float64).reshape(-1)
    if arith == "cvt" or not np.all(np.isfinite(w)):
        return "cvt"
    bound = 255.0 * float(np.abs(w).sum()) * (1 + 2.0 ** -20) + 1.0
    if bound >= 2.0 ** 22:
        return "cvt"
    for k in range(25):
        scaled = w * 2.0 ** k
        if np.all(scaled == np.floor(scaled)):
            return "exact" if bound * 2.0 ** k < 2.0 ** 23 else "magic"
    return "magic"
