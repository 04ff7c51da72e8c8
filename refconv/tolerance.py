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
and ``l2`` magnitudes of the Sobel gradients, widened by ``gamma_3`` for the ``l2`` sqrt) is
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
"""
from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["acceptance", "Acceptance", "Verdict", "MODES", "default_mode"]

_LD = np.longdouble
_LD_OK = np.finfo(_LD).nmant >= 63 and np.finfo(_LD).maxexp > 1024


def _ref_type(F: np.dtype):
    return np.dtype(np.float64) if F == np.float32 else np.dtype(_LD if _LD_OK else np.float64)


def _u(dt) -> float:
    return 2.0 ** -(np.finfo(dt).nmant + 1)


def _gamma(n: int, dt) -> float:
    nu = n * _u(dt)
    return nu / (1 - nu)


MODES = ("proven", "probabilistic")
#: per-element probability that the probabilistic bound is exceeded (under its model); see
#: :func:`probabilistic_lambda` and the module docstring
FALSE_ALARM = 1e-9
_MODE = contextvars.ContextVar("refconv_tolerance_mode", default=None)


def default_mode() -> str:
    """The tolerance mode used when :func:`acceptance` gets none: ``REFCONV_TOLERANCE`` (set by
    ``refconv check --tolerance`` and pytest ``--refconv-tolerance``), else ``"proven"``."""
    return check_mode(os.environ.get("REFCONV_TOLERANCE") or "proven", "REFCONV_TOLERANCE")


def check_mode(mode: str, what: str = "tolerance") -> str:
    if mode not in MODES:
        raise ValueError(f"{what} is {mode!r}; accepted: {', '.join(MODES)}")
    return mode


def probabilistic_lambda(n: int, dt) -> float:
    """Higham & Mary (2019), Thm 4.2: with independent mean-zero rounding errors, a dot product of
    length n satisfies ``|y_hat - y| <= gamma~_n(lam) sum|w x|`` with probability at least
    ``1 - 2 n exp(-lam**2 (1-u)**2 / 2)``.  This ``lam`` makes that failure probability
    :data:`FALSE_ALARM`."""
    u = _u(dt)
    return float(np.sqrt(2 * np.log(2 * n / FALSE_ALARM)) / (1 - u))


def _gamma_prob(n: int, dt) -> float:
    """``gamma~_n(lam) = exp(lam sqrt(n) u + n u**2 / (1 - u)) - 1`` (Higham & Mary 2019)."""
    u = _u(dt)
    return float(np.expm1(probabilistic_lambda(n, dt) * np.sqrt(n) * u + n * u * u / (1 - u)))


def _gamma_mode(n: int, dt) -> float:
    """The working-type factor of the bound: ``gamma_n`` (proven) or ``gamma~_n(lam)``
    (probabilistic), never above ``gamma_n``."""
    if (_MODE.get() or "proven") == "probabilistic":
        return min(_gamma_prob(n, dt), _gamma(n, dt))
    return _gamma(n, dt)


def _product_bits(w, wh, wl, x, xh, xl):
    """Significant bits of each product ``w*x`` (nonzero finite operands, their (highest, lowest)
    set-bit exponents from :func:`_bits`): exact from the odd integer significands when those
    multiply exactly in float64, else the upper bound ``bits(w) + bits(x)`` (one less when an
    operand is a power of two)."""
    bw, bx = wh - wl + 1, xh - xl + 1
    with np.errstate(all="ignore"):
        mw = np.ldexp(np.abs(np.asarray(w, np.float64)), -wl.astype(np.int64))
        mx = np.ldexp(np.abs(np.asarray(x, np.float64)), -xl.astype(np.int64))
        _, e = np.frexp(mw * mx)
    bound = np.where((bw == 1) | (bx == 1), bw + bx - 1, bw + bx)
    return np.where(bw + bx <= 53, e, bound)


def _overflow_threshold(F, R):
    fi = np.finfo(F)
    if R == F or (R == np.float64 and F == np.float64):
        return R.type(fi.max)
    return R.type(2) ** (fi.maxexp - 1) * (R.type(2) - R.type(2) ** -(fi.nmant + 1))


def _bits(v: np.ndarray):
    """(e_hi, e_lo) of each nonzero finite value (float64-representable): highest and lowest set
    bit exponents; zeros give (0, large) and must be masked by the caller."""
    v = np.asarray(v, np.float64)
    m, e = np.frexp(v)
    mi = np.abs(m * 2.0 ** 53).astype(np.int64)
    low = mi & -mi
    low = np.where(low == 0, 1, low)
    _, le = np.frexp(low.astype(np.float64))
    return e - 1, e - 53 + le - 1


# ----------------------------------------------------------------------------- accepted sets

@dataclass
class _FSet:
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
            parts.append(f"[{_fmt(self.lo[i])}, {_fmt(self.hi[i])}]")
        parts += [s for s, f in (("+Inf", self.pinf), ("-Inf", self.ninf), ("NaN", self.nan)) if f[i]]
        return " or ".join(parts) if parts else "nothing"

    def map(self, fn):
        """Apply a monotone non-decreasing elementwise map to the end points."""
        with np.errstate(all="ignore"):
            return _FSet(fn(self.lo), fn(self.hi), self.fin, self.pinf, self.ninf, self.nan)

    def to_float(self, O):
        s = self.map(lambda v: v.astype(O))
        with np.errstate(invalid="ignore"):
            pinf = s.pinf | (s.fin & (s.hi == np.inf))
            ninf = s.ninf | (s.fin & (s.lo == -np.inf))
            fin = s.fin & (s.lo < np.inf) & (s.hi > -np.inf)
        lo = np.where(fin, s.lo, 0).astype(O)
        hi = np.where(fin, s.hi, 0).astype(O)
        return _FSet(lo, hi, fin, pinf, ninf, s.nan)

    def to_int(self, O, rounding, cast):
        from refconv.specs.filter2d import cast_to_int, round_values
        rnd = (lambda v: round_values(v, rounding))
        with np.errstate(all="ignore"):
            lo = np.where(self.fin, rnd(self.lo), 0)
            hi = np.where(self.fin, rnd(self.hi), 0)
        conv = (lambda v: cast_to_int(v, np.dtype(np.int64), "wrap")) if cast == "wrap" else \
            (lambda v: cast_to_int(v, O, "saturate").astype(np.int64))
        special = cast_to_int(np.array([np.nan, np.inf, -np.inf]), O, cast).astype(np.int64)
        extras = [(self.nan, int(special[0]), "NaN"), (self.pinf, int(special[1]), "+Inf"),
                  (self.ninf, int(special[2]), "-Inf")]
        return _ISet(conv(lo), conv(hi), self.fin.copy(), np.iinfo(O).bits if cast == "wrap" else None,
                     extras, O)


@dataclass
class _ISet:
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


def _fmt(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float):
        return repr(float(v))
    return str(v)


# ----------------------------------------------------------------------------- dot engine

def _dot(taps, shape, F):
    """Accepted set (_FSet in F) of ``sum_k w_k x_k`` over the taps, any order / FMA.

    ``taps`` yields ``(w, x, r)``: arrays (or scalars) broadcastable to ``shape``; ``w`` and
    ``x`` hold ``F`` values (``x`` may be an R value when ``r`` > 0), ``r`` is None or the radius
    of ``x``'s uncertainty."""
    F = np.dtype(F)
    R = _ref_type(F)
    fi = np.finfo(F)
    prec = fi.nmant + 1
    emin_sub = int(np.log2(float(fi.smallest_subnormal)))
    z = lambda: np.zeros(shape, R)  # noqa: E731
    center, S, P, N, radsum = z(), z(), z(), z(), z()
    nan_c = np.zeros(shape, bool)
    pinf_c = np.zeros(shape, bool)
    ninf_c = np.zeros(shape, bool)
    exact = np.ones(shape, bool)
    g = np.full(shape, 10 ** 6, np.int64)
    npos = np.zeros(shape, np.int64)
    nneg = np.zeros(shape, np.int64)
    n = 0
    with np.errstate(all="ignore"):
        for w, x, r in taps:
            n += 1
            w = np.broadcast_to(np.asarray(w), shape)
            x = np.broadcast_to(np.asarray(x), shape)
            wR, xR = w.astype(R), x.astype(R)
            wn, xn = np.isnan(wR), np.isnan(xR)
            wi, xi = np.isinf(wR), np.isinf(xR)
            nanp = wn | xn | (wi & (xR == 0)) | (xi & (wR == 0))
            infp = ~nanp & (wi | xi)
            neg = np.signbit(wR) ^ np.signbit(xR)
            pinf_c |= infp & ~neg
            ninf_c |= infp & neg
            nan_c |= nanp
            fm = ~(nanp | infp)
            p = np.where(fm, wR * xR, 0)
            ap = np.abs(p)
            center += p
            if r is not None:
                rr = np.abs(wR) * np.broadcast_to(np.asarray(r), shape).astype(R)
                rr = np.where(fm, rr, 0)
                radsum += rr
                exact &= rr == 0
            else:
                rr = 0
            S += ap + rr
            P += np.maximum(p, 0) + rr
            N += np.minimum(p, 0) - rr
            npos += (p > 0) | (np.asarray(rr) > 0)
            nneg += (p < 0) | (np.asarray(rr) > 0)
            # exactness of the product in F
            nz = fm & (p != 0)
            wh, wl = _bits(np.where(nz, w, 1).astype(np.float64))
            xh, xl = _bits(np.where(nz, x, 1).astype(np.float64))
            xf = np.where(nz, x.astype(F).astype(R) == xR, True)  # x is an F value
            pok = (_product_bits(np.where(nz, w, 1), wh, wl, np.where(nz, x, 1), xh, xl) <= prec) & \
                  (wl + xl >= emin_sub) & \
                  (np.abs(p) <= R.type(fi.max)) & xf
            exact &= ~nz | pok
            g = np.where(nz, np.minimum(g, wl + xl), g)
        if n == 0:
            raise ValueError("dot product with no terms")
        exact &= ~(nan_c | pinf_c | ninf_c)
        gclip = np.clip(g, -20000, 20000).astype(np.float64)
        exact &= (S == 0) | (S.astype(np.float64) < np.ldexp(1.0, (prec + gclip).astype(int)))
        eta_F = R.type(fi.smallest_subnormal)
        eta_R = R.type(np.finfo(R).smallest_subnormal)
        rad = (R.type(_gamma_mode(n, F)) + R.type(_gamma(n, R))) * S + radsum + n * (eta_F + eta_R)
        rad = rad * (1 + 8 * R.type(_u(R)))
        rad = np.where(exact, 0, rad)
        lo = np.where(exact, center, np.nextafter(center - rad, R.type(-np.inf)))
        hi = np.where(exact, center, np.nextafter(center + rad, R.type(np.inf)))
        T = _overflow_threshold(F, R)
        # a partial sum can only overflow through its same-sign terms: the computed sum of k
        # of them is at most (1 + gamma_k) times their exact sum
        uF = _u(F)
        # (the last rounding overflows iff the value it rounds reaches T: gamma_{k-1})
        kp, kn = np.maximum(npos - 1, 0), np.maximum(nneg - 1, 0)
        gpos = R.type(uF) * kp / (1 - R.type(uF) * kp)
        gneg = R.type(uF) * kn / (1 - R.type(uF) * kn)
        pinf_p = (P * (1 + gpos) >= T) | (hi >= T)
        ninf_p = (N * (1 + gneg) <= -T) | (lo <= -T)
        fin = (lo < T) & (hi > -T)
        nan_p = pinf_p & ninf_p
        cert_nan = nan_c | (pinf_c & ninf_c)
        pinf = np.where(cert_nan, False, np.where(pinf_c, True, np.where(ninf_c, False, pinf_p)))
        ninf = np.where(cert_nan, False, np.where(ninf_c, True, np.where(pinf_c, False, ninf_p)))
        nan = np.where(cert_nan, True, np.where(pinf_c, ninf_p, np.where(ninf_c, pinf_p, nan_p)))
        fin = fin & ~(cert_nan | pinf_c | ninf_c)
        loF = np.where(fin, lo, 0).astype(F)
        hiF = np.where(fin, hi, 0).astype(F)
    return _FSet(loF, hiF, fin, pinf, ninf, nan), center, rad, exact


# ----------------------------------------------------------------------------- ops

def _mod(name):
    import importlib
    return importlib.import_module(f"refconv.specs.{name}")


def _filter2d(inputs, options):
    fmod = _mod("filter2d")
    o = dict(boundary="zero", flip=False, accumulator=None, shift=0, rounding="trunc",
             cast="saturate", out_dtype=None)
    o.update(options)
    a = fmod.resolve(inputs["image"], inputs["weights"], o["boundary"], o["flip"], o["accumulator"],
                     o["shift"], o["rounding"], o["cast"], o["out_dtype"])
    img, out, work = a["image"], a["out_dtype"], a["work"]
    kh, kw = a["weights"].shape
    shape = img.shape[:-2] + fmod.out_hw(img.shape[-2], img.shape[-1], kh, kw, a["boundary"])
    if a["accumulator"] == "int":
        iset = _int_accumulator(fmod.taps(a, np.float64), shape)
        L, H = iset
        L, H = L >> a["shift"], H >> a["shift"]
        if out.kind == "f":
            fs = _FSet(L.astype(out), H.astype(out), np.ones(shape, bool), *(np.zeros(shape, bool),) * 3)
            return fs
        fin = np.ones(shape, bool)
        if a["cast"] == "saturate":
            info = np.iinfo(out)
            return _ISet(np.clip(L, info.min, info.max), np.clip(H, info.min, info.max), fin, None, [], out)
        return _ISet(L, H, fin, np.iinfo(out).bits, [], out)
    if 0 in shape:
        fs = _FSet(np.zeros(shape, work), np.zeros(shape, work), *(np.zeros(shape, bool),) * 4)
    else:
        fs = _dot(((w, x, None) for w, x in fmod.taps(a)), shape, work)[0]
    if a["shift"]:
        k = work.type(2.0 ** -a["shift"])
        fs = fs.map(lambda v: v * k)
    if out.kind == "f":
        return fs.to_float(out)
    return fs.to_int(out, a["rounding"], a["cast"])


def _rn32_sum(a, b):
    """``rn_float32(a + b)`` of float64 arrays, correctly rounded (no double rounding): ``a`` holds
    float32 values, ``b`` any float64 value.  The float64 sum ``s`` and its exact error ``err``
    (TwoSum) give the float32 result: ``float32(s)``, except where ``s`` is a float32 tie and
    ``err != 0``, when the exact sum lies on the side of ``err``."""
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        r = s.astype(np.float32)
        r64 = r.astype(np.float64)
        toward = np.where(r64 > s, np.float32(-np.inf), np.float32(np.inf)).astype(np.float32)
        other = np.nextafter(r, toward)
        fin = np.isfinite(s) & np.isfinite(r64) & np.isfinite(other)
        tie = fin & (r64 != s) & (np.abs(r64 - s) == np.abs(other.astype(np.float64) - s)) & (err != 0)
        pick = np.where(err > 0, np.maximum(r, other), np.minimum(r, other))
        return np.where(tie, pick, r)


def _int_accumulator(taps, shape):
    """Integer interval ``[lo, hi]`` of the paper-faithful int accumulator (module docstring).

    One tap maps ``acc`` to ``g(acc) = cvt_rzi_sat(rn32(rn32(float(acc)) + p))``, where ``p`` is
    the product: ``rn32(w*x)`` (the spec) or the exact ``w*x`` (an FMA).  The int->float conversion
    and the float add round to nearest, deterministic and monotone; so is the truncating,
    saturating conversion.  ``g`` is therefore non-decreasing in ``acc`` and in ``p``, and the
    exact image of ``[lo, hi]`` is ``[min_p g(lo), max_p g(hi)]``: only the FMA choice widens it.
    Non-finite products are deterministic (NaN -> 0, +-Inf -> the int32 limits)."""
    from refconv.specs.filter2d import f32_to_int32_rz
    lo = np.zeros(shape, np.int64)
    hi = np.zeros(shape, np.int64)
    with np.errstate(all="ignore"):
        for w, x in taps:
            w32 = np.float32(w)
            x = np.broadcast_to(np.asarray(x, np.float64), shape)
            if not np.isfinite(w32):
                v = lo.astype(np.float32) + w32 * x.astype(np.float32)
                lo = hi = f32_to_int32_rz(v).astype(np.int64)
                continue
            p_round = (w32 * x.astype(np.float32)).astype(np.float64)   # the spec's rounded product
            p_exact = np.float64(w32) * x                               # exact (24 + 8 bits); an FMA's
            ends = []
            for end, pick in ((lo, np.minimum), (hi, np.maximum)):
                a = end.astype(np.float32).astype(np.float64)           # rn int -> float32
                v = pick(_rn32_sum(a, p_round), _rn32_sum(a, p_exact))
                ends.append(f32_to_int32_rz(v.astype(np.float32)).astype(np.int64))
            lo, hi = ends
    return lo, hi


def _conv2d(inputs, options):
    cmod = _mod("conv2d")
    o = dict(stride=1, padding=0, dilation=1, groups=1)
    o.update(options)
    a = cmod.resolve(inputs["x"], inputs["w"], inputs.get("bias"), o["stride"], o["padding"],
                     o["dilation"], o["groups"])
    x, w, bias = a["x"], a["w"], a["bias"]
    n_, c = x.shape[:2]
    m, cg = w.shape[:2]
    mg = m // a["groups"]
    shape = (n_, m, a["oh"], a["ow"])

    def taps():
        for i, j, xw in cmod.windows(a):
            for ci in range(cg):
                idx = (np.arange(m) // mg) * cg + ci
                yield w[:, ci, i, j][None, :, None, None], xw[:, idx], None
        if bias is not None:
            yield np.ones((), x.dtype), bias[None, :, None, None], None

    return _dot(taps(), shape, x.dtype)[0]


def _matvec(inputs, options):
    mmod = _mod("matvec")
    a = mmod.resolve(inputs["m"], inputs["v"])
    m, v = a["m"], a["v"]
    return _dot(((m[:, k], v[k], None) for k in range(m.shape[1])), (m.shape[0],), m.dtype)[0]


def _sobel(inputs, options):
    smod = _mod("sobel")
    from refconv.specs.filter2d import out_hw, pad_image
    o = dict(magnitude="l1", boundary="valid", out_dtype=np.uint8, cast="saturate", rounding="trunc")
    o.update(options)
    a = smod.resolve(inputs["image"], o["magnitude"], o["boundary"], o["out_dtype"], o["cast"], o["rounding"])
    img, F, out = a["image"], a["work"], a["out_dtype"]
    R = _ref_type(F)
    hw = img.shape[:2]
    if img.ndim == 3:
        ch = img[..., :3].astype(np.float32)
        fs, center, rad, ex = _dot(((np.float32(k), ch[..., t], None)
                                    for t, k in enumerate(smod.GRAY_WEIGHTS)), hw, np.float32)
        gc, gr = center, rad
    else:
        gc, gr = img.astype(R), None
    oh, ow = out_hw(hw[0], hw[1], 3, 3, a["boundary"])
    shape = (oh, ow)
    pc = pad_image(gc, 3, 3, a["boundary"])
    pr = pad_image(gr, 3, 3, a["boundary"]) if gr is not None else None
    if 0 in shape:
        e = np.zeros(shape, bool)
        fs = _FSet(np.zeros(shape, F), np.zeros(shape, F), e, e, e, e)
        return fs.to_float(out) if out.kind == "f" else fs.to_int(out, a["rounding"], a["cast"])
    grads = []
    for gt in (smod.GX_TAPS, smod.GY_TAPS):
        taps = ((F.type(wt), pc[i:i + oh, j:j + ow], None if pr is None else pr[i:i + oh, j:j + ow])
                for i, j, wt in gt)
        grads.append(_dot(taps, shape, F)[0])
    fx, fy = grads
    fs = _magnitude(fx, fy, a["magnitude"], F, R)
    if out.kind == "f":
        return fs.to_float(out)
    return fs.to_int(out, a["rounding"], a["cast"])


def _abs_interval(s: _FSet):
    lo, hi = s.lo, s.hi
    alo = np.where(lo >= 0, lo, np.where(hi <= 0, -hi, 0))
    ahi = np.maximum(np.abs(lo), np.abs(hi))
    return alo.astype(lo.dtype), ahi.astype(lo.dtype)


def _magnitude(fx: _FSet, fy: _FSet, kind, F, R):
    fi = np.finfo(F)
    prec = fi.nmant + 1
    with np.errstate(all="ignore"):
        xlo, xhi = _abs_interval(fx)
        ylo, yhi = _abs_interval(fy)
        fin = fx.fin & fy.fin
        nan = fx.nan | fy.nan
        inf_x, inf_y = fx.pinf | fx.ninf, fy.pinf | fy.ninf
        pinf = (inf_x & (fy.fin | inf_y)) | (inf_y & (fx.fin | inf_x))
        if kind == "l1":
            lo = xlo + ylo            # F arithmetic: rn is monotone
            hi = xhi + yhi
            pinf |= fin & np.isinf(hi)
        else:
            single = (fx.lo == fx.hi) & (fy.lo == fy.hi)
            a, b = xlo, ylo
            ah, al = _bits(np.where(a == 0, 1, a))
            bh, bl = _bits(np.where(b == 0, 1, b))
            emin_sub = int(np.log2(float(fi.smallest_subnormal)))
            sq_ok = ((a == 0) | ((2 * (ah - al + 1) <= prec) & (2 * al >= emin_sub))) & \
                    ((b == 0) | ((2 * (bh - bl + 1) <= prec) & (2 * bl >= emin_sub)))
            a2, b2 = a.astype(R) * a.astype(R), b.astype(R) * b.astype(R)
            s2 = a2 + b2
            g = np.minimum(np.where(a == 0, 10 ** 5, 2 * al), np.where(b == 0, 10 ** 5, 2 * bl))
            sum_ok = (s2 == 0) | (s2.astype(np.float64) < np.ldexp(1.0, np.clip(prec + g, -2000, 2000)))
            sum_ok &= s2 <= R.type(fi.max)
            # the squares and their sum may be exact, but sqrt is only required to be faithful
            # (cv2.magnitude and fast-math sqrtf are not correctly rounded): never a singleton
            exact = single & sq_ok & sum_ok & False
            # squares and sum: relative gamma_2 plus underflow (eta per square, in the squared
            # domain); sqrt: relative u.  Both monotone, applied to the end points.
            g2 = R.type(_gamma(2, F))
            u = R.type(_u(F))
            eta = R.type(fi.smallest_subnormal) * 3
            rlo = np.sqrt(np.maximum((a2 + b2) * (1 - g2) - eta, 0)) * (1 - u)
            rhi = np.sqrt((xhi.astype(R) ** 2 + yhi.astype(R) ** 2) * (1 + g2) + eta) * (1 + u)
            rlo = np.maximum(np.nextafter(rlo, R.type(-np.inf)), 0)
            rhi = np.nextafter(rhi, R.type(np.inf))
            spec = np.sqrt(a * a + b * b)
            lo = np.where(exact, spec, rlo.astype(F))
            hi = np.where(exact, spec, rhi.astype(F))
            over = xhi.astype(R) ** 2 + yhi.astype(R) ** 2 >= _overflow_threshold(F, R)
            pinf |= fin & (over | np.isinf(hi))
        fin = fin & np.isfinite(lo)
        lo = np.where(fin, lo, 0).astype(F)
        hi = np.where(fin, hi, 0).astype(F)
    return _FSet(lo, hi, fin, pinf, np.zeros_like(fin), nan)


def _exact_set(expected: np.ndarray):
    if expected.dtype.kind == "f":
        fin = np.isfinite(expected)
        lo = np.where(fin, expected, 0).astype(expected.dtype)
        return _FSet(lo, lo.copy(), fin, expected == np.inf, expected == -np.inf, np.isnan(expected))
    e = expected.astype(np.int64)
    return _ISet(e, e.copy(), np.ones(e.shape, bool), None, [], expected.dtype)


# ----------------------------------------------------------------------------- public API

@dataclass
class Verdict:
    """Result of :meth:`Acceptance.check`."""

    ok: bool
    n_bad: int
    first_bad: tuple | None
    max_abs: float
    max_rel: float
    exact: bool
    message: str
    bad_mask: np.ndarray | None = field(default=None, repr=False)


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
            d = np.where(both, np.abs(g64 - e64), 0.0)
            rel = np.where(both & (d > 0), d / np.maximum(np.abs(e64), np.finfo(np.float64).tiny), 0.0)
        max_abs = float(d.max()) if d.size else 0.0
        max_rel = float(rel.max()) if rel.size else 0.0
        first = None
        kind = "exact" if self.exact else ("within the probabilistic bound" if self.mode == "probabilistic"
                                           else "within the bound")
        if n_bad:
            first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape))
            msg = (f"{n_bad} of {exp.size} elements not accepted ({kind}); first at {first}: got "
                   f"{_fmt(got[first])}, accepted {self.accepted.describe(first)}, expected {_fmt(exp[first])}")
        else:
            msg = f"all {exp.size} elements accepted ({kind}); max abs diff {max_abs:g}, max rel {max_rel:g}"
        return Verdict(n_bad == 0, n_bad, first, max_abs, max_rel, self.exact, msg, bad)

    def __repr__(self):
        return f"Acceptance({self.op}, shape={self.expected.shape}, dtype={self.expected.dtype}, exact={self.exact})"


_ENGINES = {"filter2d": _filter2d, "conv2d": _conv2d, "sobel": _sobel, "matvec": _matvec}
_ARGS = {"filter2d": ("image", "weights"), "conv2d": ("x", "w", "bias"), "sobel": ("image",),
         "matvec": ("m", "v"), "kron": ("a", "b")}


def acceptance(op: str, inputs: dict, options: dict, *, mode: str | None = None) -> Acceptance:
    """The accepted results of ``refconv.specs.<op>(*inputs, **options)`` (see module docstring).

    ``inputs`` is keyed by input name (filter2d: image, weights; conv2d: x, w, bias (optional);
    sobel: image; matvec: m, v; kron: a, b); ``options`` are the spec's keyword arguments.
    ``mode``: ``"proven"`` (the worst-case ``gamma_n`` bound) or ``"probabilistic"`` (Higham &
    Mary's ``lam sqrt(n) u``, exceeded with probability at most :data:`FALSE_ALARM` per element
    under its model); default :func:`default_mode` (``REFCONV_TOLERANCE``, else proven)."""
    from refconv import specs
    if op not in _ARGS:
        raise ValueError(f"op {op!r} not accepted; accepted: {tuple(_ARGS)}")
    inputs = dict(inputs)
    options = dict(options or {})
    missing = [k for k in _ARGS[op] if k not in inputs and k != "bias"]
    if missing:
        raise ValueError(f"acceptance({op!r}): missing inputs {missing}; required: {list(_ARGS[op])}")
    args = [inputs.get(k) for k in _ARGS[op]]
    expected = getattr(specs, op)(*args, **options)
    mode = default_mode() if mode is None else check_mode(mode, "mode")
    if op == "kron":
        acc = _exact_set(expected)
    else:
        token = _MODE.set(mode)
        try:
            acc = _ENGINES[op](inputs, options)
        finally:
            _MODE.reset(token)
        if isinstance(acc, _FSet) and acc.lo.dtype != expected.dtype:  # pragma: no cover
            acc = acc.to_float(expected.dtype)
    a = Acceptance(op, expected, acc)
    a.mode = mode
    return a


def exact(op: str, expected: np.ndarray) -> Acceptance:
    """The acceptance of an op whose every element is one correctly rounded (or exact integer)
    result, so the only accepted value is ``expected`` itself (NaN accepted where it is NaN).
    Used to check a part of a result (the row blocks of a streamed ``kron``) on its own."""
    expected = np.asarray(expected)
    return Acceptance(op, expected, _exact_set(expected))
