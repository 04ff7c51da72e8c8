"""The arithmetic path of the ``best_R{R}`` filter2d kernels (numba_cuda and OpenCL twins), chosen on
the host from the weights: pure NumPy, shared by both backends so that the twins always take the
same path.  The paths (``cvt``, ``magic``, ``exact``, ``swar``) give the spec's bits; see
``refconv.backends.numba_cuda.filter2d_best`` for what each computes and why it is exact.
"""
from __future__ import annotations

import numpy as np

PATHS = ("cvt", "magic", "exact", "int", "swar")
ARITH = ("auto", "cvt", "float", "int")
#: on the ``swar`` path, how many of a thread's 16 columns (the last ones; 0 or 4) take the float
#: ``exact`` arithmetic with ``trunc`` on every tap instead of the lanes.  Four shortened the
#: busiest pipe while a sign tap took 6 instructions (H100: 17.2 us against 17.8 with none); with
#: the multiply-high sign test (:data:`SWAR_SIGN` ``"hi"``) none was as fast at R = 2 (17.1 against
#: 17.1 us) and faster at R = 5 (Numba 17.3 against 18.8, OpenCL 16.4 against 17.7;
#: docs/performance.md, issue 24's seventh round), and the shipped shift was timed with none only.
#: Read at each run by both twins, so that a sweep can time both settings.
SWAR_FLOAT_COLS = 0
#: on the ``swar`` path, how a sign tap (``TAP_SIGN``) moves each lane's bit 15 down to its units:
#: ``"shift"``, ``(0x10001 & ~(s >> 15)) * (2**k - 1)`` (a shift and one logic op: the integer ALU);
#: ``"hi"``, the high word of ``(~s & 0x80008000) * ((2**k - 1) << 17)``, which is ``2**k - 1`` in
#: every lane whose bit 15 is clear (a multiply-add high, ``IMAD.HI``: the multiply pipe; ptxas
#: adds a zeroed register for the low word of its 64-bit addend, often one more instruction); or
#: ``"mixed"``: the multiply high on odd taps and the shift on even ones.  H100, the preset
#: (issue 24's seventh round, docs/performance.md): shift 15.9 / 15.6 us (Numba R2 / OpenCL R5),
#: mixed 16.3 / 15.8, hi 17.0 / 16.2.  ``"prmt"``: the lanes hold the complement ``2**15 - 1 - A``
#: (bit 15 set where the sum ``A < 0``), a byte permute replicates each lane's bit 15 over its low
#: byte and one multiply-add subtracts ``2**k - 1`` there, then an OR sets the low ``k`` bits: four
#: instructions for two outputs, two on each pipe (shipped; H100, the same run: 13.9 / 13.7 us against
#: the shift's 15.8 / 15.4, Numba R2 / OpenCL R5; issue 24's eighth round).  Read at each run by
#: both twins, so that a sweep can time each.
SWAR_SIGN = "prmt"
SWAR_SIGNS = ("hi", "shift", "mixed", "prmt")


def swar_sign() -> str:
    """:data:`SWAR_SIGN`, checked against :data:`SWAR_SIGNS`."""
    if SWAR_SIGN not in SWAR_SIGNS:
        raise ValueError(f"filter2d_arith.SWAR_SIGN={SWAR_SIGN!r} not accepted; accepted: "
                         + ", ".join(repr(v) for v in SWAR_SIGNS))
    return SWAR_SIGN


#: the bound on ``H * W`` below which both twins compute a row's place in 32-bit arithmetic (NVIDIA
#: builds 64-bit products and shifts for it otherwise, about 20 instructions a row in numba's SASS);
#: a test lowers it to run the 64-bit indexing on small images
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
