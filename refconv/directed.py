"""Directed cases: the fixed cases every variant runs before the random draws.

An op record declares a small table of directed rows (:class:`refconv.specs.record.Directed`: an
input pattern aimed at a bug class, e.g. zero and tiny weights next to NaN/±Inf pixels) and which
of its size dims lie along a launch axis (``OpRecord.grid``).  :func:`directed_cases` turns that
table into concrete ``(problem, params)`` cases for one variant, inside its declared support:

* the *value* cases: every row crossed **pairwise** (every pair of values of two factors appears
  in some case; not the full product) with every value a variant's ``supports`` admits of each
  tuple-domain dim and option (dtype, accumulator, out_dtype, cast, border, flip, ...) and a few
  representatives of each ranged one (its low end, the next value, its capped high end: shift,
  stride, padding, kernel and channel sizes); the launch parameters cycle through their values;
* the *geometry* cases: sizes along each launch axis derived from the launch parameters drawn
  for the case (``M``: the first integer parameter for ``x``, the second for ``y``): one element;
  ``M − 1`` × ``M + 1`` and ``M + 1`` × ``M − 1`` (one partial block at each edge); ``2M + 1``
  both ways at the smallest parameters (several blocks and a partial one); ``4M + 3`` along one
  axis, ``M`` the axis parameter's largest value, run at the smallest parameters (several blocks
  even where a thread handles a coarsened run of outputs).  The first three ride on value cases (a
  table row's second and later cases); the rest are cases of their own with ``random`` data.
  A value case that carries no geometry has ``M + 1`` along each axis, within the profile's caps.

Each case is built through the op record's own ``draw`` with a deterministic drawer, so the
record's rules (which options apply to which dtype, validity) hold; a case the variant's
``constraint`` or support rejects is dropped, and a table row no admitted case can realise is
*skipped* (counted, never failed).  The result is deterministic: the same variant gets the same
cases in every run, so a verdict on a directed case never depends on the seed.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from . import ops
from .specs.record import Directed
from .problem import FILL_KINDS, Problem
from .profiles import Profile, get_profile
from .strategies import domain, host_bytes, host_memory
from .variant import Range, Variant

#: the geometry cases: (x kind, y kind) per case, sizes from the launch parameter M of the axis
GEOMETRY = (("one", "one"), ("below", "above"), ("above", "below"), ("several", "several"),
            ("wide", "one"), ("one", "wide"))
#: the geometry kinds a value case may carry (a table row's second and later cases), so that they
#: cost no case of their own; the others (several blocks) run with general ``random`` data
SHARED_GEOMETRY = GEOMETRY[:3]
#: cost bound of a directed case: its input and output elements together, times the product of
#: its integer launch parameters (a proxy for the threads a simulator runs); past it the case
#: falls back to the smallest launch parameters, else it is dropped
MAX_COST = 1 << 18
#: at most this many value cases per variant (the pairwise crossing is greedy and covers the pairs
#: with a table row first, then those with the dtype; it stops here)
MAX_VALUE_CASES = 24

_INT_FILLS = tuple(k for k in FILL_KINDS if k != "special")


@dataclass(frozen=True)
class DirectedCase:
    """One directed case: the problem, its launch parameters, and the table row (or geometry
    kind) it comes from (``label``, e.g. ``"sparse-nan"`` or ``"geometry several x several"``)."""

    problem: Problem
    params: dict
    label: str


@dataclass(frozen=True)
class DirectedTable:
    """The directed cases of one variant and the table rows it skips (outside its support)."""

    cases: tuple
    skipped: tuple


class _Skip(Exception):
    """The record's draw rejected this combination (an ``assume`` failed)."""


def _geom_size(kind: str, m: int, lo: int) -> int:
    v = {"one": lo, "below": m - 1, "above": m + 1, "several": 2 * m + 1, "wide": 4 * m + 3}[kind]
    return max(v, lo)


def _int_params(params: dict) -> list:
    return [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool)]


class _Drawer:
    """The deterministic stand-in for :class:`refconv.strategies.Drawer` that a record's ``draw``
    is run with: each key takes the case's chosen value when its domain admits it, else the
    domain's first value (or low end); size dims along a launch axis take the geometry size."""

    def __init__(self, variant: Variant, profile: Profile, choice: dict, sizes: dict):
        self.variant, self._profile, self._choice, self._sizes = variant, profile, choice, sizes

    def dom(self, key: str):
        return domain(self.variant, key, self._profile)

    def declared(self, key: str) -> bool:
        return key in self.variant.supports

    def _fit(self, dom, want):
        if isinstance(dom, Range):
            if want is not None and want in dom:
                return want
            return dom.lo
        dom = tuple(dom)
        if want in dom or (want is None and None in dom):
            return want
        if not dom:
            raise _Skip
        return dom[0]

    def pick(self, key: str):
        return self._fit(self.dom(key), self._choice.get(key, _MISSING))

    def size(self, key: str):
        if key in self._sizes:
            dom = domain(self.variant, key)          # uncapped: directed sizes may pass the profile's caps
            want = self._sizes[key]
            if isinstance(dom, Range):
                return min(max(want, dom.lo), dom.hi) if dom.hi is not None else max(want, dom.lo)
            return self._fit(dom, want)
        return self.pick(key)

    def one_of(self, values, key: str | None = None):
        values = tuple(values)
        if not values:
            raise _Skip
        want = self._choice.get(key, _MISSING) if key else _MISSING
        return want if want in values else values[0]

    def assume(self, condition) -> None:
        if not condition:
            raise _Skip


_MISSING = object()


def representatives(dom, option: bool = False) -> tuple:
    """The values of a domain a directed case tries: all of a tuple domain; of a (capped) range
    its low and high ends, and for a dim also the next value (a kernel of 1, 2 and the most)."""
    if isinstance(dom, Range):
        hi = dom.hi if dom.hi is not None else dom.lo + 2
        return tuple(sorted({dom.lo, hi} | (set() if option else {min(dom.lo + 1, hi)})))
    return tuple(dom)


def _fill_for(variant: Variant, row: Directed | None, name: str, dtype) -> str | None:
    kinds = FILL_KINDS if np.dtype(dtype).kind == "f" else _INT_FILLS
    allowed = variant.supports.get(f"fill.{name}")
    if allowed is not None:
        kinds = tuple(k for k in kinds if k in allowed)
    wanted = row.fill_kinds(name) if row is not None else ()
    for k in wanted:
        if k in kinds:
            return k
    if wanted and row is not None and name in row.fills:
        return None                    # the row needs a pattern this input cannot take
    for k in ("random", "exact", "ramp"):
        if k in kinds:
            return k
    return kinds[0] if kinds else None


def _params_for(variant: Variant, i: int) -> dict:
    """Launch parameters for case ``i``: each parameter cycles through its values (offset by its
    position, so that two parameters do not move in lockstep)."""
    return {p.name: p.values[(i + j * (i // max(len(p.values), 1))) % len(p.values)]
            for j, p in enumerate(variant.params)}


def _smallest_params(variant: Variant) -> dict:
    return {p.name: min(p.values, key=lambda v: (not isinstance(v, int), v if isinstance(v, int) else 0))
            for p in variant.params}


def _elements(problem: Problem) -> int:
    n = sum(int(np.prod(s, dtype=np.int64)) for s in problem.input_shapes().values())
    shape, _ = problem.record.output_layout(problem.dims, problem.options)
    return n + int(np.prod(shape, dtype=np.int64))


class _Builder:
    def __init__(self, variant: Variant, profile: Profile):
        self.variant, self.profile = variant, profile
        self.rec = ops.get(variant.op)

    def sizes_for(self, params: dict, kinds: tuple | None, scale: dict | None = None) -> dict:
        """Sizes of the grid dims: geometry ``kinds`` (x, y) relative to the launch parameters
        (or to ``scale[axis]`` where given), or for value cases one partial block past M
        (``M + 1``) kept within the profile's caps."""
        ints = _int_params(params)
        mx = ints[0] if ints else 8
        my = ints[1] if len(ints) > 1 else mx
        mx, my = (scale or {}).get("x", mx), (scale or {}).get("y", my)
        out = {}
        for dim, axis in self.rec.grid.items():
            m = max(mx if axis == "x" else my, 2)
            lo = domain(self.variant, dim).lo if isinstance(domain(self.variant, dim), Range) else 1
            if kinds is None:
                cap = self.profile.cap(self.variant.op, dim)
                v = m + 1 if cap is None or m + 1 <= cap else (cap if cap % 2 else cap - 1)
                out[dim] = max(v, lo)
            else:
                out[dim] = _geom_size(kinds[0] if axis == "x" else kinds[1], m, lo)
        return out

    def pinned(self, row: Directed) -> dict | None:
        """The row's pins resolved against the variant's domains: key -> the admitted values of the
        pin, in the row's order; None when a pin has no admitted value (the row is outside the
        support)."""
        out = {}
        for k, prefs in row.pins.items():
            try:
                dom = domain(self.variant, k, self.profile)
            except ValueError:
                dom = domain(self.variant, k)
            ok = tuple(v for v in prefs if (v in dom if isinstance(dom, Range) else v in tuple(dom)))
            if not ok:
                return None
            out[k] = ok
        return out

    def build(self, choice: dict, row: Directed | None, params: dict, sizes: dict):
        """The case for these choices, or None when the record's rules, the variant's support or
        its constraint reject it, or the problem does not hold the row's pinned values."""
        pins = {}
        if row is not None:
            pins = self.pinned(row)
            if pins is None:
                return None
            choice = {**choice, **{k: v[0] for k, v in pins.items()}}
        dr = _Drawer(self.variant, self.profile, choice, sizes)
        try:
            d, o = self.rec.draw(dr) if self.rec.draw is not None else self._default_draw(dr)
        except _Skip:
            return None
        except Exception as e:                     # hypothesis.reject() inside domain(): not admitted
            if type(e).__name__ in ("UnsatisfiedAssumption", "Unsatisfiable"):
                return None
            raise
        if self.rec.why_invalid(d, o) is not None:
            return None
        if any((d[k] if k in d else o[k]) not in v for k, v in pins.items() if k in d or k in o):
            return None                            # the record's rules overrode a pin (an option
            #                                        they leave out does not apply to these dims)
        fills = {}
        for name in self.rec.input_shapes(d):
            kind = _fill_for(self.variant, row, name, self.rec.input_dtype(name, d))
            if kind is None:
                return None
            seed = row.seed if row is not None else 1
            fills[name] = f"{kind}.{0 if kind in ('zero', 'one', 'ramp') else seed}"
        try:
            problem = Problem(self.variant.op, d, o, fills)
        except ValueError:
            return None
        if host_bytes(problem, self.variant) > self.profile.host_fraction * host_memory():
            return None
        if self.variant.constraint is not None and self.variant.constraint(problem, params) is not None:
            return None
        return problem

    def _default_draw(self, dr):
        d = {k: dr.size(k) for k in self.rec.dims}
        o = {k: dr.pick(k) for k in self.rec.options}
        dr.assume(self.rec.why_invalid(d, o) is None)
        return d, o

    def fitted(self, choice, row, params, kinds, scale=None):
        """:meth:`build` within :data:`MAX_COST`: first with ``params``, then with every
        parameter at its smallest value; value cases (``kinds`` None) stay within the caps."""
        tried = []
        for p in (params, _smallest_params(self.variant)):
            if p in tried:
                continue
            tried.append(p)
            problem = self.build(choice, row, p, self.sizes_for(p, kinds, scale))
            if problem is not None and _elements(problem) * int(np.prod(_int_params(p) or [1])) <= MAX_COST:
                return problem, p
        return None

    def largest(self, axis: str) -> int | None:
        """The largest value of the launch parameter along ``axis`` (``x``: the first integer
        parameter, ``y``: the second)."""
        ints = [p for p in self.variant.params if all(isinstance(v, int) and not isinstance(v, bool)
                                                      for v in p.values)]
        i = 0 if axis == "x" else 1
        if not ints:
            return None
        return max(ints[min(i, len(ints) - 1)].values)


def _factors(variant: Variant, profile: Profile) -> list:
    """``(key, values)`` of the pairwise crossing: every tuple-domain dim and option the variant
    admits, the representatives of every ranged non-grid dim and option."""
    rec = ops.get(variant.op)
    out = []
    for key in list(rec.dims) + list(rec.options):
        if key in rec.grid:
            continue
        try:
            dom = domain(variant, key, profile)
        except ValueError:
            continue
        vals = representatives(dom, option=key in rec.options)
        if len(vals) > 1:
            out.append((key, vals))
    return out


def _realised(problem: Problem, keys) -> dict:
    o = problem.record.complete(problem.options)
    return {k: problem.dims[k] if k in problem.dims else o.get(k) for k in keys}


def _pair_key(k1, v1, k2, v2) -> tuple:
    """The key of the pair (k1 = v1, k2 = v2), the same in either order."""
    (a, va), (b, vb) = sorted([(k1, repr(v1)), (k2, repr(v2))])
    return a, va, b, vb


def _priority(pair: tuple) -> tuple:
    """The order in which open pairs start a case: a table row's pairs, then the dtype's."""
    keys = (pair[0], pair[2])
    return (0 if "row" in keys else 1 if "dtype" in keys else 2,) + pair


def _pairs(values: dict) -> set:
    return {_pair_key(a, va, b, vb) for (a, va), (b, vb) in itertools.combinations(values.items(), 2)}


def directed_cases(variant: Variant, profile: Profile | str = "ci") -> DirectedTable:
    """The directed cases of ``variant`` (see the module docstring), in a fixed order: the value
    cases, then the geometry cases."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    rec = ops.get(variant.op)
    b = _Builder(variant, prof)
    factors = [("row", tuple(r.name for r in rec.directed))] + _factors(variant, prof) \
        if rec.directed else _factors(variant, prof)
    rows = {r.name: r for r in rec.directed}
    keys = [k for k, _ in factors]
    uncovered = {_pair_key(a, x, bk, y) for (a, va), (bk, vb) in itertools.combinations(factors, 2)
                 for x in va for y in vb}
    if len(factors) == 1:
        uncovered = {(factors[0][0], repr(v), "", "") for v in factors[0][1]}
    cases, realised_rows, seen = [], set(), set()
    shared = list(SHARED_GEOMETRY)
    vals_of = {k: {repr(v): v for v in vs} for k, vs in factors}
    i = 0
    while uncovered and len(cases) < MAX_VALUE_CASES:
        start = min(uncovered, key=_priority)
        choice = {start[0]: vals_of[start[0]][start[1]]}
        if start[2]:
            choice[start[2]] = vals_of[start[2]][start[3]]
        for k, vs in factors:                      # greedy: the value covering most open pairs
            if k in choice:
                continue
            best = max(vs, key=lambda v: sum(_pair_key(k, v, k2, v2) in uncovered for k2, v2 in choice.items()))
            choice[k] = best
        row = rows.get(choice.get("row"))
        params = _params_for(variant, i)
        i += 1
        kinds = shared[0] if shared and rec.grid and row is not None and row.name in realised_rows else None
        got = b.fitted(choice, row, params, kinds)
        uncovered.discard(start)                   # realised or not, this start is done
        if got is None:
            continue
        problem, p = got
        real = _realised(problem, [k for k in keys if k != "row"])
        if row is not None:
            real["row"] = row.name
        new = (_pairs(real) if len(real) > 1 else {(k, repr(v), "", "") for k, v in real.items()}) & uncovered
        if not new and start not in _pairs(real):
            continue
        key = (problem.descriptor(), tuple(sorted(p.items())))
        if key in seen:
            continue
        seen.add(key)
        uncovered -= new
        if row is not None:
            realised_rows.add(row.name)
        label = row.name if row is not None else "values"
        if kinds is not None:
            shared.remove(kinds)
            label += f" + geometry {kinds[0]} x {kinds[1]}"
        cases.append(DirectedCase(problem, p, label))
    _leftover_rows(b, rec, variant, i, seen, realised_rows, cases)
    if rec.grid:
        _geometry_cases(b, variant, shared, seen, cases)
    skipped = tuple(r.name for r in rec.directed if r.name not in realised_rows)
    return DirectedTable(tuple(cases), skipped)


def _leftover_rows(b, rec, variant: Variant, i: int, seen: set, realised_rows: set, cases: list) -> None:
    """The table rows not realised yet (the crossing stopped early): one case each, at the pinned
    values and the ``i``-th and later launch parameters; appended to ``cases``."""
    for r in rec.directed:
        if r.name in realised_rows:
            continue
        got = b.fitted({"row": r.name}, r, _params_for(variant, i), None)
        i += 1
        if got is not None:
            key = (got[0].descriptor(), tuple(sorted(got[1].items())))
            if key not in seen:
                seen.add(key)
                realised_rows.add(r.name)
                cases.append(DirectedCase(got[0], got[1], r.name))


def _geometry_cases(b, variant: Variant, shared: list, seen: set, cases: list) -> None:
    """The geometry cases of a grid op (:data:`GEOMETRY`), but those a value case carried
    (a :data:`SHARED_GEOMETRY` kind no longer in ``shared``); appended to ``cases``."""
    for kinds in GEOMETRY:
        if kinds in SHARED_GEOMETRY and kinds not in shared:
            continue                          # a value case carried it
        # several blocks with the fewest threads: the smallest launch parameters; "wide" is
        # relative to the largest value of the axis's parameter, so that it spans several
        # blocks even where a thread covers a coarsened run of outputs
        params = _smallest_params(variant)
        scale = {ax: b.largest(ax) for ax, k in zip("xy", kinds) if k == "wide" and b.largest(ax)}
        got = b.fitted({}, None, params, kinds, scale)
        if got is None:
            continue
        key = (got[0].descriptor(), tuple(sorted(got[1].items())))
        if key in seen:
            continue
        seen.add(key)
        cases.append(DirectedCase(got[0], got[1], f"geometry {kinds[0]} x {kinds[1]}"))
