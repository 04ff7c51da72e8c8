"""Hypothesis strategies: problems (and launch parameters) drawn inside a variant's declared support.

The strategies hunt edge cases on purpose:

* sizes from 1 up (shrinking goes to the smallest), and sizes that are *not* multiples of the
  drawn launch parameters (block, tile, coarsening factor): for every integer parameter value
  ``m`` the sizes ``k·m − 1, k·m, k·m + 1`` are favoured;
* kernels larger than the image (kernel and image sizes are drawn independently);
* fills (see :mod:`refconv.problem`): extremes (0, 255, dtype max/min, ±max, subnormals), one-hot
  ``delta`` images, mixed-sign weights, NaN/Inf/−0 (``special``, floats only), benchdnn-style
  exactly-representable data (``exact``/``ramp``, so comparison is bitwise) mixed with general
  ``random`` floats; two examples in three draw a pairing of fills aimed at one bug class
  (the op record's ``fill_combos``: full-significand data times ``onehot`` powers of two,
  bitwise at any n; ``sparse`` zero/tiny weights on NaN/Inf/huge pixels; ``ties``; saturation
  ``edge`` values);
* every option value a variant's ``supports`` admits (filter2d ``accumulator`` and ``out_dtype``,
  sobel ``out_dtype``; rounding/cast only where they apply, i.e. integer outputs);
* launch parameters are drawn first, from each :class:`~refconv.variant.Param`'s values, and a
  variant's ``constraint`` filters impossible combinations;
* for a variant that declares strided inputs (``Variant.layouts``), each input's layout in
  memory (a row pitch, a step, transposed storage; :data:`refconv.problem.LAYOUT_KINDS`), drawn
  after everything else so that other variants draw exactly as they did.

Every drawn problem respects ``variant.supports`` intersected with the profile's size caps.
What an op's problem is, and how one is drawn, is its record's (:class:`refconv.specs.record.OpRecord`:
``draw`` with a :class:`Drawer`, else every dim then every option from its domain).
"""
from __future__ import annotations

import dataclasses
import os

from hypothesis import assume, reject
from hypothesis import strategies as st

import numpy as np

from . import ops
from .cost import example_cost, work_budget
from .problem import FILL_KINDS, Problem
from .profiles import Profile, get_profile
from .variant import Range, Variant

_INT_FILLS = tuple(k for k in FILL_KINDS if k != "special")


def domain(variant: Variant, key: str, profile: Profile | None = None):
    """The values ``key`` may take for ``variant``: its declared support, else the op's default
    domain.  With a ``profile``, a ``Range``'s upper end is capped by the profile, or for a dim
    it does not cap by the op record's ``caps`` for that profile (never below the lower bound),
    and a size the profile fixes (one of its whole configurations) is the only value, or the
    draw is rejected when the variant does not support it."""
    od = ops.get(variant.op)
    dom = variant.supports.get(key, od.dims.get(key, od.options.get(key)))
    if dom is None:
        raise KeyError(f"{variant.id}: no domain for {key!r}")
    if profile is None:
        return dom
    fixed = _FIXED.get(id(profile), {})
    if key in fixed:
        if fixed[key] not in dom:
            reject()
        return (fixed[key],)
    if isinstance(dom, Range):
        dom = dom.cap(profile.cap(variant.op, key))
        if not dom.bounded:
            raise ValueError(f"profile {profile.name!r} does not cap {variant.op} dim {key!r} and "
                             f"{variant.id} supports {dom!r}: add a cap for {key!r} to the profile or to the op "
                             f"record's caps")
    return dom


#: id(profile) -> the sizes one drawn configuration fixes (set while drawing one case)
_FIXED: dict = {}


def _pick(draw, dom):
    if isinstance(dom, Range):
        return draw(st.integers(dom.lo, dom.hi))
    return draw(st.sampled_from(tuple(dom)))


def _size(draw, dom, moduli, multiples=(1, 2, 3)):
    """A size in ``dom``, favouring k·m−1, k·m, k·m+1 for the parameter values m (k from the
    profile's ``multiples``)."""
    if not isinstance(dom, Range):
        return draw(st.sampled_from(tuple(dom)))
    multiples = getattr(moduli, "multiples", multiples)
    special = sorted({k * m + d for m in moduli for k in multiples for d in (-1, 0, 1)
                      if dom.lo <= k * m + d <= dom.hi})
    if special:
        return draw(st.one_of(st.integers(dom.lo, dom.hi), st.sampled_from(special)))
    return draw(st.integers(dom.lo, dom.hi))


def launch_params(variant: Variant, profile: Profile | None = None, budget: float | None = None):
    """A strategy for ``{param: value}`` over the variant's declared values; with a work
    ``budget`` (:mod:`refconv.cost`), only the combinations whose smallest problem fits it (the
    cheapest combinations when none does, so that a variant is never left without a draw)."""
    if not variant.params:
        return st.just({})
    if budget is not None and profile is not None:
        combos = _combos_within(variant, profile, budget)
        if combos is not None:
            return st.sampled_from(combos)
    return st.fixed_dictionaries({p.name: st.sampled_from(p.values) for p in variant.params})


_MAX_COMBOS = 4096   # launch-parameter combinations enumerated to apply a budget (more: not filtered)


def _smallest(variant: Variant, profile: Profile, known: dict) -> dict:
    """The dims of ``known`` completed with the smallest value of every other dim's domain."""
    rec = ops.get(variant.op)
    d = dict(known)
    for k in rec.dims:
        if k not in d:
            dom = domain(variant, k, profile)
            vals = tuple(dom) if not isinstance(dom, Range) else ()
            d[k] = (dom.lo if isinstance(dom, Range) else
                    min(vals) if all(isinstance(x, int) for x in vals) else vals[0])
    return d


def _cost_of(variant: Variant, dims: dict, options: dict, params: dict) -> float:
    """The example cost of these dims, options and params; 0 when they make no problem yet (an
    intermediate point of a draw: the final check of the draw judges the whole case)."""
    try:
        return example_cost(variant, Problem(variant.op, dims, options, {}), params)
    except Exception:  # noqa: BLE001 - an invalid intermediate combination
        return 0.0


def _combos_within(variant: Variant, profile: Profile, budget: float):
    import itertools
    names = [p.name for p in variant.params]
    n = 1
    for p in variant.params:
        n *= len(p.values)
    if n > _MAX_COMBOS:
        return None
    smallest = _smallest(variant, profile, {})
    costed = [(_cost_of(variant, smallest, {}, dict(zip(names, vs))), dict(zip(names, vs)))
              for vs in itertools.product(*(p.values for p in variant.params))]
    ok = [c for cost, c in costed if cost <= budget]
    if not ok:
        least = min(cost for cost, _ in costed)
        ok = [c for cost, c in costed if cost == least]
    return ok


def _allowed_kinds(variant, name, dtype):
    kinds = FILL_KINDS if str(dtype).startswith("float") else _INT_FILLS
    allowed = variant.supports.get(f"fill.{name}")
    if allowed is not None:
        kinds = tuple(k for k in kinds if k in allowed)
    return kinds


def _fills(draw, variant, names_dtypes):
    """One fill per input: two times in three a combination from the record's ``fill_combos`` (one
    per bug class: a full-significand operand times a one-hot power of two, so that every output
    is one exact product and an input rounded to TF32/bfloat16/float16 shows; NaN/Inf/huge pixels
    under zero and tiny weights; quarter-valued .5 ties; values at the saturation edges) that the
    variant's support and the dtypes admit, otherwise (and for inputs it leaves out) independent
    kinds."""
    kinds = {name: _allowed_kinds(variant, name, dtype) for name, dtype in names_dtypes}
    combos = [c for c in ops.get(variant.op).fill_combos
              if all(c[n] in kinds[n] for n in kinds if n in c)]
    combo = draw(st.sampled_from(combos)) if combos and draw(st.integers(0, 2)) else {}
    fills = {}
    for name, _ in names_dtypes:
        kind = combo[name] if name in combo else draw(st.sampled_from(kinds[name]))
        seed = draw(st.integers(0, 2**16))
        fills[name] = f"{kind}.{0 if kind in ('zero', 'one', 'ramp') else seed}"
    return fills


def _layouts(draw, variant: Variant, shapes: dict) -> dict:
    """One layout per input (:data:`refconv.problem.LAYOUT_KINDS`) for a variant whose
    ``layouts`` has ``"strided"``: a row pitch of 1 to 8 extra elements, a step of 2 or 3 along
    the last axis, or transposed storage (2-D and more); C-contiguous one time in five when the
    variant also declares ``"contiguous"`` (and for an input where no strided layout applies)."""
    out = {}
    for name, shape in shapes.items():
        kinds = ["step"] if len(shape) == 1 else ["pitch", "step", "t"] if len(shape) >= 2 else []
        if not kinds or ("contiguous" in variant.layouts and draw(st.integers(0, 4)) == 0):
            continue
        kind = draw(st.sampled_from(kinds))
        out[name] = ("t" if kind == "t" else f"pitch{draw(st.integers(1, 8))}" if kind == "pitch"
                     else f"step{draw(st.integers(2, 3))}")
    return out


def _moduli(params: dict) -> set:
    ints = [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool) and v > 1]
    mods = set(ints)
    for a in ints:  # a thread block of bx threads each doing cf outputs covers bx*cf
        for b in ints:
            mods.add(a * b)
    return mods


class Drawer:
    """What an op record's ``draw`` draws with: values from the domains of one variant (its
    ``supports`` over the op's domains, capped by the profile; see :func:`domain`)."""

    def __init__(self, draw, variant: Variant, profile: Profile, moduli, params: dict | None = None,
                 budget: float | None = None):
        self._draw, self.variant, self._profile, self._moduli = draw, variant, profile, moduli
        self._params, self._budget = params or {}, budget
        self._dims: dict = {}      # the dims drawn so far (for the work budget)
        self._options: dict = {}   # the options drawn so far

    def dom(self, key: str):
        """The domain of dim or option ``key``."""
        return domain(self.variant, key, self._profile)

    def declared(self, key: str) -> bool:
        """Whether the variant's ``supports`` names ``key``."""
        return key in self.variant.supports

    def _within_budget(self, key: str, dom):
        """``dom`` with its upper end lowered so that the example's cost, with the dims drawn so
        far and every dim not drawn yet at its smallest, stays inside the work budget (the
        largest such value, by bisection: a cost does not decrease when a size grows)."""
        rec = ops.get(self.variant.op)
        if self._budget is None or not isinstance(dom, Range) or key not in rec.dims:
            return dom

        def fits(x):
            d = _smallest(self.variant, self._profile, {**self._dims, key: x})
            return _cost_of(self.variant, d, self._options, self._params) <= self._budget

        if fits(dom.hi):
            return dom
        lo, hi = dom.lo, dom.hi          # fits(lo) or not: lo stays the floor of the domain
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        return Range(dom.lo, lo)

    def _note(self, key: str, value):
        if key in ops.get(self.variant.op).dims:
            self._dims[key] = value
        else:
            self._options[key] = value
        return value

    def pick(self, key: str):
        """Any value of ``key``'s domain (inside the work budget, for a size)."""
        return self._note(key, _pick(self._draw, self._within_budget(key, self.dom(key))))

    def size(self, key: str):
        """A size from ``key``'s domain, favouring k·m−1, k·m, k·m+1 for the launch parameters m
        (inside the work budget)."""
        return self._note(key, _size(self._draw, self._within_budget(key, self.dom(key)), self._moduli))

    def one_of(self, values, key: str | None = None):
        """Any of ``values`` (the admitted values of ``key``, when the record names it: the
        directed cases' drawer, :mod:`refconv.directed`, then picks the value it crosses)."""
        return self._draw(st.sampled_from(tuple(values)))

    def assume(self, condition) -> None:
        """Reject this draw unless ``condition`` holds."""
        assume(condition)


def _draw_default(rec, dr: Drawer):
    """Every dim (sizes favouring the launch parameters' multiples), then every option, from
    their domains; then the record's validity rule."""
    d = {k: dr.size(k) for k in rec.dims}
    o = {k: dr.pick(k) for k in rec.options}
    dr.assume(rec.why_invalid(d, o) is None)
    return d, o


class _Moduli(set):
    """The launch-parameter moduli of one draw, with the profile's multiples k."""
    multiples = (1, 2, 3)


def cases(variant: Variant, profile: Profile | str = "ci"):
    """A strategy for ``(problem, params)`` pairs inside ``variant``'s declared support (and the
    profile's caps, whole configurations, host-memory budget and, on a simulator, the work budget
    of one example: :mod:`refconv.cost`)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    budget = work_budget(variant, prof)
    return _cases(variant, prof, budget, launch_params(variant, prof, budget))


@st.composite
def _cases(draw, variant: Variant, prof: Profile, budget: float | None, params_strategy=None):
    params = draw(params_strategy if params_strategy is not None else launch_params(variant, prof, budget))
    shapes = prof.configurations(variant.op)
    if shapes and draw(st.integers(0, 99)) < round(100 * prof.shape_weight):
        prof = dataclasses.replace(prof)         # a private copy: its id keys the fixed sizes
        _FIXED[id(prof)] = draw(st.sampled_from(shapes))
    moduli = _Moduli(_moduli(params))
    moduli.multiples = prof.multiples
    rec = ops.get(variant.op)
    try:
        dr = Drawer(draw, variant, prof, moduli, params, budget)
        d, o = rec.draw(dr) if rec.draw is not None else _draw_default(rec, dr)
        assume(rec.why_invalid(d, o) is None)       # whatever the record's draw does
        fills = _fills(draw, variant, [(n, rec.input_dtype(n, d)) for n in rec.input_shapes(d)])
    finally:
        _FIXED.pop(id(prof), None)
    # drawn last, and only for a variant that declares strided inputs: every other variant's
    # draws (and so what each seed gives it) are what they were before layouts existed
    layouts = _layouts(draw, variant, rec.input_shapes(d)) if "strided" in variant.layouts else {}
    problem = Problem(variant.op, d, o, fills, layouts)
    assume(host_bytes(problem, variant) <= prof.host_fraction * host_memory())
    if variant.constraint is not None:
        assume(variant.constraint(problem, params) is None)
    if budget is not None:   # drawn inside it; what a record's own draw computes is checked here
        assume(example_cost(variant, problem, params) <= budget or _cheapest(variant, prof, budget, problem))
    return problem, params


def _cheapest(variant: Variant, prof: Profile, budget: float, problem: Problem) -> bool:
    """Whether ``problem`` has every size at its smallest (a variant whose smallest problem is over
    the budget still gets those draws, so that it is never left without one)."""
    return problem.dims == _smallest(variant, prof, {k: v for k, v in problem.dims.items()
                                                     if not isinstance(domain(variant, k, prof), Range)})


def host_memory() -> int:
    """Physical memory of this machine in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 << 30


def _output_elements(problem: Problem) -> int:
    shape, _ = problem.record.output_layout(problem.dims, problem.options)
    return int(np.prod(shape, dtype=np.int64))


def _laid_out_elements(shape, token: str | None) -> int:
    """Elements an input of ``shape`` holds in memory: once logically, and once more in its
    strided layout (a row pitch's or a step's wider rows, the transposed copy)."""
    n = int(np.prod(shape, dtype=np.int64))
    if not token or not shape:
        return n
    w = int(shape[-1])
    k = int("".join(ch for ch in token if ch.isdigit()) or 1)
    wide = w + k if token.startswith("pitch") else w * k
    return n + (n // w * wide if w else 0)


def host_bytes(problem: Problem, variant: Variant | None = None) -> int:
    """An upper estimate of the host memory one check of ``problem`` holds: the inputs (twice
    for a strided layout: the logical array and the wider one it is a view of), and the output
    buffer unless ``variant`` streams it (``output="rows"``), at 8 bytes an element."""
    n = sum(_laid_out_elements(s, problem.layouts.get(name)) for name, s in problem.input_shapes().items())
    if variant is None or variant.output != "rows":
        n += _output_elements(problem)
    return 8 * n


def outside_support(variant: Variant, problem: Problem, params: dict) -> str | None:
    """Why ``(problem, params)`` is not a case the strategies could draw for ``variant`` (a dim
    outside its domain, the op's cross-dimension rules, ``variant.constraint``), or ``None``.
    Used to keep cases built outside Hypothesis (a shrunk hang) inside the declared support."""
    d, o = problem.dims, problem.options
    for k, val in d.items():
        dom = domain(variant, k)
        if val not in dom:
            return f"{k}={val!r} outside {dom!r}"
    why = problem.record.why_invalid(d, o)
    if why is not None:
        return why
    if problem.layouts and "strided" not in variant.layouts:
        return f"strided inputs {problem.layouts} for a variant that takes {', '.join(variant.layouts)} ones only"
    for name, fill in problem.fills.items():
        allowed = variant.supports.get(f"fill.{name}")
        if allowed is not None and fill.partition(".")[0] not in allowed:
            return f"fill {name}={fill} outside {allowed!r}"
    try:
        variant.check_params(params)
    except ValueError as e:
        return str(e)
    if variant.constraint is not None:
        return variant.constraint(problem, params)
    return None

