r"""Exactness and tolerance: which results of an implementation the spec accepts.

The checker calls exactly::

    acceptance(op, inputs, options) -> Acceptance
    Acceptance.expected   # the spec's result (refconv.specs.<op>(**inputs, **options))
    Acceptance.exact      # True when every element must match the spec (NaN matches any NaN)
    Acceptance.check(got) -> Verdict

Rules
-----
Every accepted set is computed *per element*.

**Exact elements.**  A float dot product ``y = sum_k w_k x_k`` (n terms) is computed exactly by
every summation order, with or without FMA, when (a) every product is exactly representable in
the working type ``F`` (precision ``p`` bits): its significant bits (from the highest to the lowest
set bit; counted exactly by multiplying the odd integer significands, else bounded by
``bits(w) + bits(x)``) are at most ``p``, and the product is inside the normal/subnormal range; and (b) with ``2**g`` the lowest set bit over all nonzero
products, ``S = sum |w_k x_k| < 2**(p + g)``: every partial sum, in any order, is then a multiple
of ``2**g`` of magnitude ``<= S``, hence representable.  Such elements get a zero-width bound.
Integer paths and ``kron`` are exact.  "Exact" compares values: NaN matches NaN of any payload,
and +0 matches -0 (the sign of a zero sum depends only on whether the accumulator starts at +0).

**Rounding-error bound** (Higham, *Accuracy and Stability of Numerical Algorithms*, Sec. 3.1).
With unit roundoff ``u`` (2**-24 float32, 2**-53 float64) and ``gamma_n = n u / (1 - n u)``, a
dot product of length n evaluated in ``F`` in *any* order, with or without FMA contraction,
satisfies ``|y_hat - y| <= gamma_n * sum |w_k x_k|`` plus, for gradual underflow, at most
``eta/2`` per rounded product (``eta`` = smallest subnormal; additions are exact in the
subnormal range).  Proof sketch: each term is multiplied by at most n factors ``(1 + d)``,
``|d| <= u`` (its product and the additions on its path in the summation tree); FMA only removes
one of them; ``prod (1 + d_i) = 1 + theta_n`` with ``|theta_n| <= gamma_n``.  The reference
``y_ref`` is computed in a wider type ``R`` (float64 for float32, x87 80-bit long double for
float64 where available, else float64) and has its own error ``gamma_n(u_R) * S``.  So the
accepted interval is ``y_ref +- (gamma_n(u_F) S + gamma_n(u_R) S + n (eta_F + eta_R))``,
widened outward by one ulp of ``R``, then rounded to ``F`` (``rn`` is monotone, and ``y_hat`` is
an ``F`` value).  Inputs themselves known only to an interval ``c +- r`` (the float32 gray of a
colour image) add ``sum |w_k| r_k`` and use ``|c| + r`` in ``S``.

**Probabilistic mode** (``mode="probabilistic"``; ``refconv check --tolerance probabilistic``).
``gamma_n(u_F)`` is replaced by ``min(gamma~_n(lam), gamma_n)``, ``gamma~_n(lam) = exp(lam sqrt(n) u
+ n u**2/(1-u)) - 1`` (Higham & Mary, SIAM J. Sci. Comput. 41(5), 2019, Thm 4.2): under the model
of independent mean-zero rounding errors it fails with probability at most
``2 n exp(-lam**2 (1-u)**2 / 2)``, which :func:`probabilistic_lambda` sets to
:data:`FALSE_ALARM` (1e-9) per element.  Everything else (exact elements, the reference's error,
underflow, post-processing) stays proven.  The default mode is ``"proven"``.

**Monotone post-processing.**  What follows the sum in the spec (``* 2**-shift``, rounding
``trunc`` / ``nearest-even``, ``saturate`` clipping, conversion to another float type, ``l1``
and ``l2`` magnitudes of the Sobel gradients, the ``l2`` one widened by ``gamma_2`` for the squares
and their sum and a relative ``u`` for the sqrt) is
monotone, so it is applied to the interval end points.  For ``cast="wrap"`` the int64 end points
``[L, H]`` accept ``got`` iff ``(got - L) mod 2**bits <= H - L``.  Integer outputs therefore
accept exactly the integers a float result inside the bound can produce -- not a blanket +-1.

**Non-finite.**  A product with a NaN operand or ``Inf*0`` makes the result NaN in every order; a
product with an Inf operand (the other finite nonzero) makes it that Inf (NaN if both signs
occur).  Otherwise ``+Inf`` is accepted where a partial sum could overflow (sum of the positive
terms + bound >= the overflow threshold ``T = (2 - 2**-p) 2**emax``) or the interval reaches
``T``; ``-Inf`` likewise; NaN where both infinities are possible.  After a cast, NaN -> 0 and
+-Inf -> the cast of +-Inf are accepted where possible.

**Paper-faithful ``accumulator="int"``** (filter2d, uint8).  Each tap maps ``acc`` to
``cvt_rzi_sat(rn32(rn32(float(acc)) + p))`` with ``p = rn32(w*x)`` (the spec) or the exact
``w*x`` (an FMA, one rounding).  The int->float conversion and the float add are deterministic
and monotone, and so is the truncating, int32-saturating conversion, so the exact image of an
interval ``[lo, hi]`` is ``[min_p step(lo), max_p step(hi)]`` (the float32 sums correctly rounded
via TwoSum, no double rounding): only the FMA choice widens it.  Then ``>> shift`` and the cast
as above, exactly.  Non-finite weights are deterministic (NaN -> 0, ``+-Inf`` -> saturate,
``Inf*0`` -> NaN -> 0).

**conv2d**: n = C/groups*R*S (+1 with bias); **matvec**: n = C; **sobel**: 6 nonzero taps per
gradient; colour input first gets a 3-term gray interval; gray uint8 input is exact.

Modules
-------
This module is the API (:func:`acceptance`, :class:`Acceptance`, :class:`Verdict`, the modes).
The accepted sets are :mod:`refconv.specs.intervals`, the dot-product bound
:mod:`refconv.specs.dotbound`; each op's engine (what its spec computes, as dot products and
monotone maps) is the ``accept`` of its record, next to its spec in ``specs/<op>.py``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import ops
from .specs.dotbound import FALSE_ALARM, MODE, MODES, check_mode, probabilistic_lambda
from .specs.intervals import FSet, exact_set, fmt_value

__all__ = ["acceptance", "exact", "Acceptance", "Verdict", "MODES", "default_mode", "set_mode", "check_mode",
           "probabilistic_lambda", "FALSE_ALARM"]

#: the float verdict of this process, set explicitly by the run (:func:`set_mode`); ``None``: not set
_process_mode: str | None = None


def set_mode(mode: str | None) -> None:
    """Make ``mode`` (one of :data:`MODES`) the float verdict of this process: the run resolves it
    once (``--tolerance``, else env ``REFCONV_TOLERANCE``, else a reproducer's, else proven) and
    passes it to every process that checks (``refconv check``'s workers get it in their job, a
    replay or hang-shrink worker as an argument).  ``None``: back to :func:`default_mode`'s
    fallback.  ``ValueError`` naming the value and the accepted ones otherwise."""
    global _process_mode
    _process_mode = None if mode is None else check_mode(mode, "tolerance mode")


def default_mode() -> str:
    """The mode :func:`acceptance` uses when given none: the one :func:`set_mode` set for this
    process, else the user's ``REFCONV_TOLERANCE`` (a program calling :func:`acceptance`
    directly), else ``"proven"``."""
    if _process_mode is not None:
        return _process_mode
    return check_mode(os.environ.get("REFCONV_TOLERANCE") or "proven", "REFCONV_TOLERANCE")


@dataclass
class Verdict:
    """Result of :meth:`Acceptance.check`.  ``max_abs``: the largest ``|got - expected|`` over the
    elements where both are finite; ``max_rel``: the same divided by ``|expected|`` where that is
    not 0 (both capped at the largest float64, so a report never holds ``inf``).  What the verdict
    used, in units a reader can judge (:func:`shares`): ``of_bound``, the largest error as a
    fraction of the error bound on its side over the elements with a bound (at most 1 when they
    are all accepted), and ``ulps``, the largest distance in units in the last place over the
    elements compared exactly (0 when they are all accepted)."""

    ok: bool
    n_bad: int
    first_bad: tuple | None
    max_abs: float
    max_rel: float
    exact: bool
    message: str
    of_bound: float = 0.0
    ulps: float = 0.0


_F64_MAX = float(np.finfo(np.float64).max)


def _ordinal(a: np.ndarray) -> np.ndarray:
    """Float values as float64 ordinals (consecutive floats of ``a``'s dtype differ by 1; +0 and
    -0 are both 0); integers as themselves."""
    if a.dtype.kind != "f":
        return a.astype(np.float64)
    i = np.ascontiguousarray(a).view(np.dtype(f"i{a.dtype.itemsize}")).astype(np.int64)
    top = np.int64(np.iinfo(np.dtype(f"i{a.dtype.itemsize}")).max)
    return np.where(i < 0, -(i & top), i).astype(np.float64)


def _bounds(accepted, got: np.ndarray, expected: np.ndarray):
    """``(g, e, lo, hi, measurable)``: got, expected and the finite accepted interval as float64
    positions, and where an element has a finite interval and finite ``got`` and ``expected``.  A
    wrapping integer set (``[L, H] mod 2**bits``) is measured by offsets from ``L`` modulo
    ``2**bits``."""
    f64 = np.float64
    if isinstance(accepted, FSet):
        lo, hi = accepted.lo.astype(f64), accepted.hi.astype(f64)
        g, e = got.astype(f64), expected.astype(f64)
    elif getattr(accepted, "bits", None) is None:
        lo, hi = accepted.L.astype(f64), accepted.H.astype(f64)
        g, e = got.astype(f64), expected.astype(f64)
    else:
        m = (1 << accepted.bits) - 1
        L = accepted.L.astype(np.int64)
        lo = np.zeros(L.shape, f64)
        hi = np.minimum(accepted.H.astype(np.int64) - L, m).astype(f64)
        g = ((got.astype(np.int64) - L) & m).astype(f64)
        e = ((expected.astype(np.int64) - L) & m).astype(f64)
    with np.errstate(invalid="ignore"):
        measurable = accepted.fin & np.isfinite(g) & np.isfinite(e)
    return g, e, lo, hi, measurable


def shares(accepted, got: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """``(of_bound, ulps)`` of ``got`` against ``expected`` and the accepted set (see
    :class:`Verdict`): per element, the error ``|got - expected|`` over the width of the accepted
    interval on the side ``got`` lies (``hi - expected`` above, ``expected - lo`` below), computed
    on halves so that values near the largest float give no overflow; where that width is 0 (an
    element compared exactly, or one side of a bound that ends at ``expected``) the error is
    counted in ULPs instead.  Non-finite results are left out (the verdict names them)."""
    g, e, lo, hi, m = _bounds(accepted, got, expected)
    with np.errstate(all="ignore"):
        err = np.abs(g * 0.5 - e * 0.5)
        width = np.where(g >= e, hi * 0.5 - e * 0.5, e * 0.5 - lo * 0.5)
        bounded = m & (err > 0) & (width > 0)
        exact_off = m & (err > 0) & ~(width > 0)
        of_bound = float(np.max(np.where(bounded, err / np.where(bounded, width, 1.0), 0.0), initial=0.0))
        ulps = 0.0
        if exact_off.any():
            ulps = float(np.max(np.abs(_ordinal(got[exact_off]) - _ordinal(expected[exact_off]))))
    return min(of_bound, _F64_MAX), ulps


class Acceptance:
    """Accepted results of one problem: ``expected`` (the spec's result), ``exact`` (every
    element is a single accepted value) and :meth:`check`."""

    def __init__(self, op: str, expected: np.ndarray, accepted):
        self.op = op
        self.expected = expected
        self.accepted = accepted
        self.single = accepted.single()
        self.exact = bool(np.all(self.single))
        self.mode = "proven"

    def check(self, got) -> Verdict:
        exp = self.expected
        try:
            got = np.asarray(got)
        except Exception as e:  # pragma: no cover
            return Verdict(False, exp.size, None, float("nan"), float("nan"), self.exact,
                           f"result is not an array: {e}")
        if got.shape != exp.shape or got.dtype != exp.dtype:
            what = "shape" if got.shape != exp.shape else "dtype"
            return Verdict(False, exp.size, None, float("nan"), float("nan"), self.exact,
                           f"{what} mismatch: got shape {got.shape} dtype {got.dtype.name}, expected "
                           f"shape {exp.shape} dtype {exp.dtype.name}")
        ok = self.accepted.contains(got)
        bad = ~ok
        n_bad = int(bad.sum())
        with np.errstate(all="ignore"):
            g64, e64 = got.astype(np.float64), exp.astype(np.float64)
            both = np.isfinite(g64) & np.isfinite(e64)
            d = np.minimum(np.where(both, np.abs(g64 - e64), 0.0), _F64_MAX)
            rel = np.minimum(np.where(both & (d > 0) & (e64 != 0), d / np.abs(e64), 0.0), _F64_MAX)
        max_abs = float(d.max()) if d.size else 0.0
        max_rel = float(rel.max()) if rel.size else 0.0
        of_bound, ulps = shares(self.accepted, got, exp)
        first = None
        kind = "exact" if self.exact else ("within the probabilistic bound" if self.mode == "probabilistic"
                                           else "within the bound")
        if n_bad:
            first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape))
            msg = (f"{n_bad} of {exp.size} elements not accepted ({kind}); first at {first}: got "
                   f"{fmt_value(got[first])}, accepted {self.accepted.describe(first)}, expected {fmt_value(exp[first])}")
        else:
            msg = (f"all {exp.size} elements accepted ({kind}); max abs diff {max_abs:g}, max rel {max_rel:g}, "
                   f"{of_bound:.2g} of the bound")
        return Verdict(n_bad == 0, n_bad, first, max_abs, max_rel, self.exact, msg, of_bound, ulps)

    def __repr__(self):
        return f"Acceptance({self.op}, shape={self.expected.shape}, dtype={self.expected.dtype}, exact={self.exact})"


def acceptance(op: str, inputs: dict, options: dict, *, mode: str | None = None) -> Acceptance:
    """The accepted results of the spec of ``op`` on ``inputs`` with ``options`` (see the module
    docstring).

    ``inputs`` is keyed by input name (the op record's ``inputs``: filter2d: image, weights;
    conv2d: x, w, bias (optional); sobel: image; matvec: m, v; kron: a, b); ``options`` are the
    spec's keyword arguments (defaults: the spec's own).  ``mode``: ``"proven"`` (the worst-case
    ``gamma_n`` bound) or ``"probabilistic"`` (Higham & Mary's ``lam sqrt(n) u``, exceeded with
    probability at most :data:`FALSE_ALARM` per element under its model); default
    :func:`default_mode` (the run's mode, else ``REFCONV_TOLERANCE``, else proven)."""
    rec = ops.get(op)
    inputs = dict(inputs)
    options = dict(options or {})
    missing = [i.name for i in rec.inputs if i.name not in inputs and not i.optional]
    if missing:
        raise ValueError(f"acceptance({op!r}): missing inputs {missing}; required: {list(rec.input_names)}")
    args = [inputs.get(k) for k in rec.input_names]
    expected = rec.spec(*args, **options)
    mode = default_mode() if mode is None else check_mode(mode, "mode")
    if rec.accept is None:
        acc = exact_set(np.asarray(expected))
    else:
        token = MODE.set(mode)
        try:
            acc = rec.accept(inputs, {**rec.defaults, **options})
        finally:
            MODE.reset(token)
        if isinstance(acc, FSet) and acc.lo.dtype != expected.dtype:  # pragma: no cover
            acc = acc.to_float(expected.dtype)
    a = Acceptance(op, expected, acc)
    a.mode = mode
    return a


def exact(op: str, expected: np.ndarray) -> Acceptance:
    """The acceptance of an op whose every element is one correctly rounded (or exact integer)
    result, so the only accepted value is ``expected`` itself (NaN accepted where it is NaN).
    Used to check a part of a result (the row blocks of a streamed ``kron``) on its own."""
    expected = np.asarray(expected)
    return Acceptance(op, expected, exact_set(expected))
