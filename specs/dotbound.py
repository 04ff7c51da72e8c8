"""The dot-product engine of the tolerance: the accepted set of ``sum_k w_k x_k`` evaluated in a
float type ``F`` in any order, with or without FMA (rules: :mod:`refconv.tolerance`).
Pure NumPy: the mode is a context variable (:data:`MODE`) the core sets; nothing here reads
the environment.

Also the numbers it is built from: unit roundoff, ``gamma_n`` (proven) and Higham & Mary's
probabilistic ``gamma~_n(lam)``, the tolerance mode in effect (:data:`MODE`, set by
:func:`refconv.tolerance.acceptance`), significant-bit counts and the overflow threshold.  Per-op
acceptance engines (next to their specs) call :func:`dot` once per dot product they contain.
"""
from __future__ import annotations

import contextvars

import numpy as np

from .intervals import FSet

_LD = np.longdouble
_LD_OK = np.finfo(_LD).nmant >= 63 and np.finfo(_LD).maxexp > 1024


def ref_type(F: np.dtype):
    """The reference type ``R`` a dot product in ``F`` is computed in: float64 for float32,
    80-bit long double for float64 where available (else float64)."""
    return np.dtype(np.float64) if F == np.float32 else np.dtype(_LD if _LD_OK else np.float64)


def unit_roundoff(dt) -> float:
    return 2.0 ** -(np.finfo(dt).nmant + 1)


def gamma(n: int, dt) -> float:
    nu = n * unit_roundoff(dt)
    return nu / (1 - nu)


MODES = ("proven", "probabilistic")
#: per-element probability that the probabilistic bound is exceeded (under its model); see
#: :func:`probabilistic_lambda` and :mod:`refconv.tolerance`
FALSE_ALARM = 1e-9
MODE = contextvars.ContextVar("refconv_tolerance_mode", default=None)


def check_mode(mode: str, what: str = "tolerance") -> str:
    if mode not in MODES:
        raise ValueError(f"{what} is {mode!r}; accepted: {', '.join(MODES)}")
    return mode


def probabilistic_lambda(n: int, dt) -> float:
    """Higham & Mary (2019), Thm 4.2: with independent mean-zero rounding errors, a dot product of
    length n satisfies ``|y_hat - y| <= gamma~_n(lam) sum|w x|`` with probability at least
    ``1 - 2 n exp(-lam**2 (1-u)**2 / 2)``.  This ``lam`` makes that failure probability
    :data:`FALSE_ALARM`."""
    u = unit_roundoff(dt)
    return float(np.sqrt(2 * np.log(2 * n / FALSE_ALARM)) / (1 - u))


def gamma_prob(n: int, dt) -> float:
    """``gamma~_n(lam) = exp(lam sqrt(n) u + n u**2 / (1 - u)) - 1`` (Higham & Mary 2019)."""
    u = unit_roundoff(dt)
    return float(np.expm1(probabilistic_lambda(n, dt) * np.sqrt(n) * u + n * u * u / (1 - u)))


def gamma_mode(n: int, dt) -> float:
    """The working-type factor of the bound: ``gamma_n`` (proven) or ``gamma~_n(lam)``
    (probabilistic), never above ``gamma_n``."""
    if (MODE.get() or "proven") == "probabilistic":
        return min(gamma_prob(n, dt), gamma(n, dt))
    return gamma(n, dt)


def product_bits(w, wh, wl, x, xh, xl):
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


def overflow_threshold(F, R):
    fi = np.finfo(F)
    if R == F or (R == np.float64 and F == np.float64):
        return R.type(fi.max)
    return R.type(2) ** (fi.maxexp - 1) * (R.type(2) - R.type(2) ** -(fi.nmant + 1))


def bits(v: np.ndarray):
    """(e_hi, e_lo) of each nonzero finite value (float64-representable): highest and lowest set
    bit exponents; zeros give (0, large) and must be masked by the caller."""
    v = np.asarray(v, np.float64)
    m, e = np.frexp(v)
    mi = np.abs(m * 2.0 ** 53).astype(np.int64)
    low = mi & -mi
    low = np.where(low == 0, 1, low)
    _, le = np.frexp(low.astype(np.float64))
    return e - 1, e - 53 + le - 1


# ----------------------------------------------------------------------------- the dot-product engine

#: the elements :meth:`_Terms.add` works on at a time
BLOCK = 1 << 16


def blocks(shape, block: int = BLOCK):
    """Index tuples that cut an array of ``shape`` into pieces of at most ``block`` elements (a
    piece is one run of the first axis whose trailing size fits, at fixed leading indices; ``()``:
    the whole array when it fits or is 0-d)."""
    shape = tuple(int(v) for v in shape)
    if not shape or int(np.prod(shape, dtype=np.int64)) <= block:
        yield ()
        return
    ax = next(a for a in range(len(shape)) if int(np.prod(shape[a + 1:], dtype=np.int64)) <= block)
    step = max(1, block // max(1, int(np.prod(shape[ax + 1:], dtype=np.int64))))
    for lead in np.ndindex(*shape[:ax]):
        for s in range(0, shape[ax], step):
            yield lead + (slice(s, s + step),)


class _Terms:
    """The running sums of a dot product's terms ``w_k x_k``, in the reference type ``R``: the
    centre ``sum p``, ``S = sum |p| + r``, the positive and negative parts ``P``, ``N`` (with the
    radii), the radius sum, the certain NaN / +inf / -inf terms, the counts of positive and
    negative terms, whether every product is exact in ``F``, and ``g``, the lowest set bit of the
    products (for the exactness of the sum)."""

    def __init__(self, shape, F: np.dtype, R: np.dtype):
        self.shape, self.F, self.R = shape, F, R
        fi = np.finfo(F)
        self.prec = fi.nmant + 1
        self.emin_sub = int(np.log2(float(fi.smallest_subnormal)))
        self.center, self.S, self.P, self.N, self.radsum = (np.zeros(shape, R) for _ in range(5))
        self.nan_c, self.pinf_c, self.ninf_c = (np.zeros(shape, bool) for _ in range(3))
        self.exact = np.ones(shape, bool)
        self.g = np.full(shape, 10 ** 6, np.int64)
        self.npos, self.nneg = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
        self.n = 0

    def add(self, w, x, r) -> None:
        """Take the term ``w x`` (``r``: None or the radius of ``x``'s uncertainty), block by block
        (:func:`blocks`: element-wise work on cache-sized pieces; a 4096 x 3072 Sobel took 80 s in
        one piece, 16 times a 1024 x 768 one's time)."""
        shape = self.shape
        self.n += 1
        w = np.broadcast_to(np.asarray(w), shape)
        x = np.broadcast_to(np.asarray(x), shape)
        r = None if r is None else np.broadcast_to(np.asarray(r), shape)
        for sl in blocks(shape):
            self._add(sl, w[sl], x[sl], None if r is None else r[sl])

    def _add(self, sl, w, x, r) -> None:
        """:meth:`add` on the elements ``sl`` (``w``, ``x``, ``r``: those elements of the term)."""
        t = self._term(w, x, r)
        self.pinf_c[sl] |= t["pinf"]
        self.ninf_c[sl] |= t["ninf"]
        self.nan_c[sl] |= t["nan"]
        self.center[sl] += t["p"]
        if r is not None:
            self.radsum[sl] += t["rr"]
        self.S[sl] += t["S"]
        self.P[sl] += t["P"]
        self.N[sl] += t["N"]
        self.npos[sl] += t["pos"]
        self.nneg[sl] += t["neg"]
        self.exact[sl] &= t["exact"]
        g = self.g[sl]
        self.g[sl] = np.where(t["nz"], np.minimum(g, t["g"]), g)

    def add_many(self, terms: list) -> None:
        """:meth:`add` of each ``(w, x, r)`` of ``terms`` in turn, as one computation on the
        terms stacked along a new first axis (``len(terms)`` times the shape must fit
        :data:`BLOCK`).  The sums accumulate term after term (``np.add.accumulate`` from the
        running value), so every bit is what :meth:`add` one term at a time gives."""
        shape = self.shape
        self.n += len(terms)
        w = np.stack([np.broadcast_to(np.asarray(t[0]), shape) for t in terms])
        x = np.stack([np.broadcast_to(np.asarray(t[1]), shape) for t in terms])
        has_r = [t[2] is not None for t in terms]
        r = None
        if any(has_r):   # a term without a radius has radius 0: every sum and flag comes out the same
            r = np.stack([np.broadcast_to(np.asarray(t[2] if t[2] is not None else 0), shape) for t in terms])
        t = self._term(w, x, r)

        def running(acc, parts):
            return np.add.accumulate(np.concatenate([acc[None], np.asarray(parts, acc.dtype)]), axis=0)[-1]

        self.pinf_c |= t["pinf"].any(axis=0)
        self.ninf_c |= t["ninf"].any(axis=0)
        self.nan_c |= t["nan"].any(axis=0)
        self.center[...] = running(self.center, t["p"])
        if r is not None:
            self.radsum[...] = running(self.radsum, t["rr"])
        self.S[...] = running(self.S, t["S"])
        self.P[...] = running(self.P, t["P"])
        self.N[...] = running(self.N, t["N"])
        self.npos += t["pos"].sum(axis=0)
        self.nneg += t["neg"].sum(axis=0)
        self.exact &= t["exact"].all(axis=0)
        self.g = np.minimum(self.g, np.where(t["nz"], t["g"], self.g[None]).min(axis=0))

    def _term(self, w, x, r) -> dict:
        """The element-wise quantities of the term(s) ``w x`` (radius ``r`` or None) that
        :meth:`_add` and :meth:`add_many` accumulate."""
        F, R = self.F, self.R
        wR, xR = np.asarray(w).astype(R), np.asarray(x).astype(R)
        wn, xn = np.isnan(wR), np.isnan(xR)
        wi, xi = np.isinf(wR), np.isinf(xR)
        nanp = wn | xn | (wi & (xR == 0)) | (xi & (wR == 0))
        infp = ~nanp & (wi | xi)
        neg = np.signbit(wR) ^ np.signbit(xR)
        fm = ~(nanp | infp)
        p = np.where(fm, wR * xR, 0)
        t = {"pinf": infp & ~neg, "ninf": infp & neg, "nan": nanp, "p": p}
        if r is not None:
            rr = np.abs(wR) * np.asarray(r).astype(R)
            rr = np.where(fm, rr, 0)
            t["rr"] = rr
            r_exact = rr == 0
        else:
            rr = 0
            r_exact = True
        t["S"] = np.abs(p) + rr
        t["P"] = np.maximum(p, 0) + rr
        t["N"] = np.minimum(p, 0) - rr
        t["pos"] = (p > 0) | (np.asarray(rr) > 0)
        t["neg"] = (p < 0) | (np.asarray(rr) > 0)
        # exactness of the product in F
        nz = fm & (p != 0)
        wh, wl = bits(np.where(nz, w, 1).astype(np.float64))
        xh, xl = bits(np.where(nz, x, 1).astype(np.float64))
        xf = np.where(nz, np.asarray(x).astype(F).astype(R) == xR, True)  # x is an F value
        pok = (product_bits(np.where(nz, w, 1), wh, wl, np.where(nz, x, 1), xh, xl) <= self.prec) & \
              (wl + xl >= self.emin_sub) & \
              (np.abs(p) <= R.type(np.finfo(F).max)) & xf
        t["exact"] = r_exact & (~nz | pok)
        t["nz"], t["g"] = nz, wl + xl
        return t

    def bounds(self):
        """``(exact, lo, hi, rad)``: where the sum is exact in any order (every product exact,
        no special term, ``S < 2**(prec + g)``), else ``centre -+ rad`` rounded outward with
        ``rad = (gamma_n(F) + gamma_n(R)) S + radsum + n (eta_F + eta_R)``, widened by 8 ulp of R."""
        F, R, n = self.F, self.R, self.n
        exact = self.exact & ~(self.nan_c | self.pinf_c | self.ninf_c)
        gclip = np.clip(self.g, -20000, 20000).astype(np.float64)
        exact &= (self.S == 0) | (self.S.astype(np.float64) < np.ldexp(1.0, (self.prec + gclip).astype(int)))
        eta_F = R.type(np.finfo(F).smallest_subnormal)
        eta_R = R.type(np.finfo(R).smallest_subnormal)
        rad = (R.type(gamma_mode(n, F)) + R.type(gamma(n, R))) * self.S + self.radsum + n * (eta_F + eta_R)
        rad = rad * (1 + 8 * R.type(unit_roundoff(R)))
        rad = np.where(exact, 0, rad)
        lo = np.where(exact, self.center, np.nextafter(self.center - rad, R.type(-np.inf)))
        hi = np.where(exact, self.center, np.nextafter(self.center + rad, R.type(np.inf)))
        return exact, lo, hi, rad

    def specials(self, lo, hi):
        """``(fin, pinf, ninf, nan)``: which results are possible.  A partial sum can only
        overflow through its same-sign terms: the computed sum of k of them is at most
        ``(1 + gamma_{k-1})`` times their exact sum (the last rounding overflows iff the value it
        rounds reaches the threshold T); certain special terms decide alone."""
        R = self.R
        T = overflow_threshold(self.F, R)
        uF = unit_roundoff(self.F)
        kp, kn = np.maximum(self.npos - 1, 0), np.maximum(self.nneg - 1, 0)
        gpos = R.type(uF) * kp / (1 - R.type(uF) * kp)
        gneg = R.type(uF) * kn / (1 - R.type(uF) * kn)
        pinf_p = (self.P * (1 + gpos) >= T) | (hi >= T)
        ninf_p = (self.N * (1 + gneg) <= -T) | (lo <= -T)
        fin = (lo < T) & (hi > -T)
        nan_p = pinf_p & ninf_p
        nan_c, pinf_c, ninf_c = self.nan_c, self.pinf_c, self.ninf_c
        cert_nan = nan_c | (pinf_c & ninf_c)
        pinf = np.where(cert_nan, False, np.where(pinf_c, True, np.where(ninf_c, False, pinf_p)))
        ninf = np.where(cert_nan, False, np.where(ninf_c, True, np.where(pinf_c, False, ninf_p)))
        nan = np.where(cert_nan, True, np.where(pinf_c, ninf_p, np.where(ninf_c, pinf_p, nan_p)))
        fin = fin & ~(cert_nan | pinf_c | ninf_c)
        return fin, pinf, ninf, nan


def dot(taps, shape, F):
    """Accepted set (FSet in F) of ``sum_k w_k x_k`` over the taps, any order / FMA.

    ``taps`` yields ``(w, x, r)``: arrays (or scalars) broadcastable to ``shape``; ``w`` and
    ``x`` hold ``F`` values (``x`` may be an R value when ``r`` > 0), ``r`` is None or the radius
    of ``x``'s uncertainty.  Returns ``(set, center, rad, exact)`` (:class:`_Terms` says how)."""
    F = np.dtype(F)
    terms = _Terms(shape, F, ref_type(F))
    size = int(np.prod(shape, dtype=np.int64))
    per = BLOCK // max(size, 1)        # terms stacked at a time (small problems: Python per term was the cost)
    with np.errstate(all="ignore"):
        batch: list = []
        for tap in taps:
            if per < 2:
                terms.add(*tap)
                continue
            batch.append(tap)
            if len(batch) == per:
                terms.add_many(batch)
                batch = []
        if batch:
            terms.add_many(batch)
        if terms.n == 0:
            raise ValueError("dot product with no terms")
        exact, lo, hi, rad = terms.bounds()
        fin, pinf, ninf, nan = terms.specials(lo, hi)
        loF = np.where(fin, lo, 0).astype(F)
        hiF = np.where(fin, hi, 0).astype(F)
    return FSet(loF, hiF, fin, pinf, ninf, nan), terms.center, rad, exact




def dot_sums(shape, F, n: int, center, S, P, N, npos, nneg, nan_c=None, pinf_c=None, ninf_c=None):
    """Accepted set of a dot product of ``n`` finite terms in ``F`` from its sums in the reference
    type, computed elsewhere in any order (e.g. by BLAS, one GEMM per sum): ``center = sum p``,
    ``S = sum |p|``, ``P = sum max(p, 0)``, ``N = sum min(p, 0)`` and the counts of positive and
    negative terms.  Any summation order of ``center`` is within the ``gamma_n(R) S`` the bound
    already allows for the reference.  The sums hold the finite terms alone; ``nan_c``, ``pinf_c``,
    ``ninf_c`` (None: none) flag where some term is certainly NaN, +inf or -inf.  Every finite term
    must be exact in ``R`` (a product of two ``F`` values with ``R`` float64 and ``F`` float32).  The sum is
    never declared exact (the per-term exactness :func:`dot` tracks is not computed): the set is the
    interval, a superset of what :func:`dot` gives.  Returns what :func:`dot` returns."""
    F = np.dtype(F)
    R = ref_type(F)
    terms = _Terms(shape, F, R)
    if n <= 0:
        raise ValueError("dot product with no terms")
    terms.n = int(n)
    terms.center[...] = center
    terms.S[...] = S
    terms.P[...] = P
    terms.N[...] = N
    terms.npos[...] = npos
    terms.nneg[...] = nneg
    for flag, given in ((terms.nan_c, nan_c), (terms.pinf_c, pinf_c), (terms.ninf_c, ninf_c)):
        if given is not None:
            flag[...] = given
    terms.exact[...] = False
    with np.errstate(all="ignore"):
        exact, lo, hi, rad = terms.bounds()
        fin, pinf, ninf, nan = terms.specials(lo, hi)
        loF = np.where(fin, lo, 0).astype(F)
        hiF = np.where(fin, hi, 0).astype(F)
    return FSet(loF, hiF, fin, pinf, ninf, nan), terms.center, rad, exact


def dot_sums_in_f(shape, F, n: int, center, S, nan_c=None, pinf_c=None, ninf_c=None):
    """Accepted set of a dot product of ``n`` finite terms in ``F`` from two sums computed in ``F``
    itself (e.g. float64 BLAS for a float64 problem, whose products round): ``center = fl(sum p)``
    and ``S = fl(sum |p|)``, each in any order, with or without FMA.  With ``y = sum p`` and
    ``S* = sum |p|`` exact, ``eta`` the smallest subnormal of ``F`` (an underflowing product's
    error) and ``gamma = gamma_n(F)``: the kernel's ``|y_hat - y| <= gamma_k S* + n eta``
    (``gamma_k``: the mode's factor, :func:`gamma_mode`), the centre's ``|center - y| <= gamma S*
    + n eta``, and ``S >= (1 - gamma) S* - n eta``; so ``|y_hat - center| <= (gamma_k + gamma)
    (S + n eta) / (1 - gamma) + 2 n eta``, the radius (times ``1 + 8u`` for its own roundings; the
    end points rounded outward).  The sums hold the finite terms alone; ``nan_c``, ``pinf_c``,
    ``ninf_c`` (None: none) flag where some term is certainly NaN, +inf or -inf: there the result
    is that value (NaN where both infinities meet; the finite part cannot overflow, see below).
    Never declared exact.  Returns what :func:`dot` returns, or None where some result could
    overflow (``|y_hat| <= (1 + gamma) (S + n eta) / (1 - gamma)
    + ...`` reaching ``F``'s range): the caller takes the per-term engine there."""
    F = np.dtype(F)
    if n <= 0:
        raise ValueError("dot product with no terms")
    center = np.asarray(center, F)
    S = np.asarray(S, F)
    if not (np.isfinite(center).all() and np.isfinite(S).all()):
        return None
    u = unit_roundoff(F)
    g, gk = gamma(n, F), gamma_mode(n, F)
    eta = F.type(np.finfo(F).smallest_subnormal)
    with np.errstate(all="ignore"):
        Sx = (S + F.type(n) * eta) / F.type(1 - g)
        rad = (F.type(gk + g) * Sx + F.type(2 * n) * eta) * F.type(1 + 8 * u)
        reach = np.abs(center) + rad
        if not np.all(np.isfinite(reach)) or np.max(reach, initial=0) >= np.finfo(F).max / 4:
            return None
        lo = np.nextafter(center - rad, F.type(-np.inf))
        hi = np.nextafter(center + rad, F.type(np.inf))
    none = np.zeros(np.shape(center), bool)
    flag = lambda v: none if v is None else np.broadcast_to(np.asarray(v, bool), none.shape)  # noqa: E731
    nan_c, pinf_c, ninf_c = flag(nan_c), flag(pinf_c), flag(ninf_c)
    nan = nan_c | (pinf_c & ninf_c)
    fin = ~(nan_c | pinf_c | ninf_c)
    lo, hi = np.where(fin, lo, 0).astype(F), np.where(fin, hi, 0).astype(F)
    return FSet(lo, hi, fin, pinf_c & ~nan, ninf_c & ~nan, nan), center, rad, none.copy()
