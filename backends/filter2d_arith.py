"""The arithmetic path of the ``best_R{R}`` filter2d kernels (numba_cuda and OpenCL twins), chosen on
the host from the weights: pure NumPy, shared by both backends so that the twins always take the
same path.  The paths (``cvt``, ``magic``, ``exact``, ``swar``) give the spec's bits; see
``refconv.backends.numba_cuda.filter2d_best`` for what each computes and why it is exact.
"""
from __future__ import annotations

import numpy as np

PATHS = ("cvt", "magic", "exact", "int", "swar")
ARITH = ("auto", "cvt", "float", "int")
#: the bound on ``H * W`` below which both twins compute a row's place in 32-bit arithmetic (NVIDIA
#: builds 64-bit products and shifts for it otherwise, about 20 instructions a row in numba's SASS)
OFF32_LIMIT = 2 ** 31


def offsets_fit_int32(H: int, W: int) -> bool:
    """Whether every byte offset into an ``H x W`` uint8 image (and so every index of its 8-byte
    words, and the products on the way to either) fits an int32: ``H * W <`` :data:`OFF32_LIMIT`."""
    return H * W < OFF32_LIMIT


def bands_exact(H: int, rows: int) -> bool:
    """Whether the ``H - 2`` output rows of an ``H``-row image split into bands of ``rows`` with none
    cut short: then no thread's band runs past the last output row, and both twins build their
    kernel without a test of each row against it (nor a clamp of the rows they load)."""
    return H >= 3 and (H - 2) % rows == 0


#: the tap kinds of the ``swar`` path (:func:`tap_kinds`)
TAP_NONE, TAP_FLOOR, TAP_CEIL, TAP_SIGN = 0, 1, 2, 3


def choose_path(w: np.ndarray, arith: str = "auto", shift: int | None = None, sat: bool | None = None) -> str:
    """The arithmetic path for float32 weights ``w`` (see the module doc): ``cvt`` unless the
    bound ``B = 255 * sum|w|`` (with slack for the roundings) keeps every partial sum below 2**22;
    then ``exact`` when the smallest ``k`` with every ``w * 2**k`` an integer has ``B * 2**k < 2**23``,
    else ``magic``.  With ``arith="auto"`` and the output stage known (``shift``, ``sat``), ``exact``
    becomes ``swar`` where :func:`swar_plan` allows it.  ``arith="float"`` is ``auto`` without
    ``swar``.  ``arith="int"`` (the numba twin only) turns ``exact`` into ``int``: the same
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
    if arith == "int":
        return "int"
    if arith == "auto" and shift is not None and swar_plan(w, shift, bool(sat)) is not None:
        return "swar"
    return "exact"


def swar_plan(w: np.ndarray, shift: int, sat: bool):
    """``(k, m, kinds)`` for the ``swar`` path, or None where it does not apply.

    The path computes two outputs in one 32-bit register, each in a 16-bit lane holding
    ``2**15 + A``, ``A`` the spec's partial sum in units of ``2**-k`` (weights ``w = m * 2**-k``,
    integers ``m``).  It applies when (i) the weights are finite and dyadic (``k`` of
    :func:`dyadic_exponent`), (ii) ``P = 255 * (sum of the positive m) < 2**15`` and ``N = 255 *
    (sum of the |negative m|) <= 2**15``: a partial sum after any tap, truncated or not, lies in
    ``[-N, P]`` (a tap adds ``m * x`` with ``0 <= x <= 255``; truncation toward zero stays between
    the sum and 0), so a lane stays in ``[0, 2**16)`` and one 32-bit multiply-add updates both
    lanes exactly; then every float32 product and sum of the spec is exact too, and its
    truncation is the lanes' truncation toward zero in units of ``2**-k``; (iii) ``k + shift <= 7``
    and wrap (not ``sat``): the output byte is bits ``k + shift .. k + shift + 7`` of a lane, the
    bias ``2**15`` contributing ``2**(15 - k - shift)``, a multiple of 256.  ``kinds``:
    :func:`tap_kinds`."""
    if sat:
        return None
    w = np.asarray(w, np.float64).reshape(-1)
    if not np.all(np.isfinite(w)):
        return None
    k = dyadic_exponent(w)
    if k is None or k + int(shift) > 7:
        return None
    m = [int(v) for v in w * 2.0 ** k]
    if 255 * sum(v for v in m if v > 0) >= 2 ** 15 or 255 * sum(-v for v in m if v < 0) > 2 ** 15:
        return None
    return k, m, tap_kinds(m, k)


def tap_kinds(m, k: int) -> tuple:
    """Per tap ``t`` of the ``swar`` path, how its truncation toward zero (in units of ``2**-k``) is
    taken: ``TAP_NONE`` where ``m[t]`` is a multiple of ``2**k`` (the sum is already whole: the
    truncation is the identity), ``TAP_FLOOR`` while every weight so far is >= 0 (the sum is >= 0:
    a mask), ``TAP_CEIL`` while every weight so far is <= 0 (add ``2**k - 1``, mask), else
    ``TAP_SIGN`` (add ``2**k - 1`` to the lanes whose bit 15 is clear, mask)."""
    out = []
    for t, mt in enumerate(m):
        if mt % (1 << k) == 0:
            out.append(TAP_NONE)
        elif all(v >= 0 for v in m[: t + 1]):
            out.append(TAP_FLOOR)
        elif all(v <= 0 for v in m[: t + 1]):
            out.append(TAP_CEIL)
        else:
            out.append(TAP_SIGN)
    return tuple(out)


def dyadic_exponent(w: np.ndarray) -> int | None:
    """The smallest ``k`` in 0..24 with every ``w * 2**k`` an integer (None if there is none)."""
    w = np.asarray(w, np.float64).reshape(-1)
    for k in range(25):
        scaled = w * 2.0 ** k
        if np.all(scaled == np.floor(scaled)):
            return k
    return None
