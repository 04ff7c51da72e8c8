"""Per-element accepted sets of results, the tolerance's values (rules: :mod:`refconv.tolerance`).

:class:`FSet`: float results in ``[lo, hi]`` plus flagged +Inf / -Inf / NaN; :class:`ISet`:
integer results in ``[L, H]`` (modulo ``2**bits`` for a wrapping cast) plus the values a NaN or an
Inf converts to.  Both answer ``contains(got)``, ``single()`` (one accepted value) and
``describe(i)``.  Monotone post-processing maps the end points (:meth:`FSet.map`,
:meth:`FSet.to_float`, :meth:`FSet.to_int`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

@dataclass
class FSet:
    """Per-element accepted set of float results: finite values in [lo, hi] (when ``fin``), and
    +Inf / -Inf / NaN where flagged.  ``lo``/``hi`` are in the result dtype."""

    lo: np.ndarray
    hi: np.ndarray
    fin: np.ndarray
    pinf: np.ndarray
    ninf: np.ndarray
    nan: np.ndarray

    def single(self):
        fin1 = self.fin & (self.lo == self.hi) & ~self.pinf & ~self.ninf & ~self.nan
        nonfin = ~self.fin & (self.pinf.astype(int) + self.ninf + self.nan == 1)
        return fin1 | nonfin

    def contains(self, got):
        g = got.astype(self.lo.dtype if self.lo.dtype.itemsize >= got.dtype.itemsize else got.dtype)
        with np.errstate(invalid="ignore"):
            ok = self.fin & np.isfinite(g) & (g >= self.lo) & (g <= self.hi)
        ok |= self.nan & np.isnan(g)
        ok |= self.pinf & (g == np.inf)
        ok |= self.ninf & (g == -np.inf)
        return ok

    def describe(self, i):
        parts = []
        if self.fin[i]:
            parts.append(f"[{fmt_value(self.lo[i])}, {fmt_value(self.hi[i])}]")
        parts += [s for s, f in (("+Inf", self.pinf), ("-Inf", self.ninf), ("NaN", self.nan)) if f[i]]
        return " or ".join(parts) if parts else "nothing"

    def map(self, fn):
        """Apply a monotone non-decreasing elementwise map to the end points."""
        with np.errstate(all="ignore"):
            return FSet(fn(self.lo), fn(self.hi), self.fin, self.pinf, self.ninf, self.nan)

    def to_float(self, O):
        s = self.map(lambda v: v.astype(O))
        with np.errstate(invalid="ignore"):
            pinf = s.pinf | (s.fin & (s.hi == np.inf))
            ninf = s.ninf | (s.fin & (s.lo == -np.inf))
            fin = s.fin & (s.lo < np.inf) & (s.hi > -np.inf)
        lo = np.where(fin, s.lo, 0).astype(O)
        hi = np.where(fin, s.hi, 0).astype(O)
        return FSet(lo, hi, fin, pinf, ninf, s.nan)

    def to_int(self, O, cast, round_fn, cast_fn):
        """The integer results (dtype ``O``) of converting this set: ``round_fn`` (floats to
        integer values, monotone: the spec's rounding) then ``cast_fn(values, dtype, cast)`` (the
        spec's conversion; ``cast`` is ``"saturate"`` or ``"wrap"``).  A wrapping cast keeps the
        int64 end points and accepts modulo ``2**bits``."""
        with np.errstate(all="ignore"):
            lo = np.where(self.fin, round_fn(self.lo), 0)
            hi = np.where(self.fin, round_fn(self.hi), 0)
        conv = (lambda v: cast_fn(v, np.dtype(np.int64), "wrap")) if cast == "wrap" else \
            (lambda v: cast_fn(v, O, "saturate").astype(np.int64))
        special = cast_fn(np.array([np.nan, np.inf, -np.inf]), O, cast).astype(np.int64)
        extras = [(self.nan, int(special[0]), "NaN"), (self.pinf, int(special[1]), "+Inf"),
                  (self.ninf, int(special[2]), "-Inf")]
        return ISet(conv(lo), conv(hi), self.fin.copy(), np.iinfo(O).bits if cast == "wrap" else None,
                    extras, O)


@dataclass
class ISet:
    """Per-element accepted set of integer results: [L, H] (modulo 2**bits when ``bits``) when
    ``fin``, plus extra values (mask, value, what) -- a NaN or an Inf cast to the output type."""

    L: np.ndarray
    H: np.ndarray
    fin: np.ndarray
    bits: int | None
    extras: list
    O: np.dtype

    def _wrap(self, v):
        return v.astype(np.int64).astype(self.O).astype(np.int64)

    def single(self):
        if self.bits is None:
            one = self.fin & (self.L == self.H)
            lv = self.L
        else:
            one = self.fin & (self.L == self.H)
            lv = self._wrap(self.L)
        for m, v, _ in self.extras:
            one &= ~m | (self.fin & (lv == v))
        none_fin = ~self.fin
        cnt = sum(m.astype(int) for m, _, _ in self.extras)
        vals = [m for m, _, _ in self.extras]
        return one | (none_fin & (cnt >= 1) & self._same_extras(vals))

    def _same_extras(self, masks):
        res = np.ones(self.fin.shape, bool)
        vs = [v for _, v, _ in self.extras]
        for a in range(len(vs)):
            for b in range(a + 1, len(vs)):
                if vs[a] != vs[b]:
                    res &= ~(masks[a] & masks[b])
        return res

    def contains(self, got):
        g = got.astype(np.int64)
        if self.bits is None:
            ok = self.fin & (g >= self.L) & (g <= self.H)
        else:
            mask = np.uint64(2 ** self.bits - 1)
            span = self.H.astype(np.uint64) - self.L.astype(np.uint64)
            off = (g.astype(np.uint64) - self.L.astype(np.uint64)) & mask
            ok = self.fin & ((span >= mask) | (off <= span))
        for m, v, _ in self.extras:
            ok |= m & (g == v)
        return ok

    def describe(self, i):
        parts = []
        if self.fin[i]:
            if self.bits is None:
                parts.append(f"[{self.L[i]}, {self.H[i]}]")
            else:
                parts.append(f"[{self.L[i]}, {self.H[i]}] mod 2**{self.bits} "
                             f"(from {self._wrap(self.L[i])} to {self._wrap(self.H[i])})")
        parts += [f"{v} ({what})" for m, v, what in self.extras if m[i]]
        return " or ".join(parts) if parts else "nothing"


def fmt_value(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float):
        return repr(float(v))
    return str(v)


def abs_interval(s: FSet):
    """``(lo, hi)`` of ``|v|`` over the finite interval of ``s``."""
    lo, hi = s.lo, s.hi
    alo = np.where(lo >= 0, lo, np.where(hi <= 0, -hi, 0))
    ahi = np.maximum(np.abs(lo), np.abs(hi))
    return alo.astype(lo.dtype), ahi.astype(lo.dtype)


def exact_set(expected: np.ndarray):
    """The set accepting only ``expected`` itself (NaN for NaN, +0 for -0)."""
    if expected.dtype.kind == "f":
        fin = np.isfinite(expected)
        lo = np.where(fin, expected, 0).astype(expected.dtype)
        return FSet(lo, lo.copy(), fin, expected == np.inf, expected == -np.inf, np.isnan(expected))
    e = expected.astype(np.int64)
    return ISet(e, e.copy(), np.ones(e.shape, bool), None, [], expected.dtype)
