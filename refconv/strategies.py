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
  (:data:`_COMBOS`: full-significand data times ``onehot`` powers of two, bitwise at any n;
  ``sparse`` zero/tiny weights on NaN/Inf/huge pixels; ``ties``; saturation ``edge`` values);
* every option value a variant's ``supports`` admits (filter2d ``accumulator`` and ``out_dtype``,
  sobel ``out_dtype``; rounding/cast only where they apply, i.e. integer outputs);
* launch parameters are drawn first, from each :class:`~refconv.variant.Param`'s values, and a
  variant's ``constraint`` filters impossible combinations.

Every drawn problem respects ``variant.supports`` intersected with the profile's size caps.
"""
from __future__ import annotations

from typing import Any

import dataclasses
import os

from hypothesis import assume, reject
from hypothesis import strategies as st

import numpy as np

from .problem import FILL_KINDS, OPDEFS, Problem
from .profiles import Profile, get_profile
from .variant import Range, Variant

_INT_FILLS = tuple(k for k in FILL_KINDS if k != "special")


def domain(variant: Variant, key: str, profile: Profile | None = None):
    """The values ``key`` may take for ``variant``: its declared support, else the op's default
    domain.  With a ``profile``, a ``Range``'s upper end is capped by the profile (never below
    the lower bound), and a size the profile fixes (one of its whole configurations) is the only
    value, or the draw is rejected when the variant does not support it."""
    od = OPDEFS[variant.op]
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
                             f"{variant.id} supports {dom!r}: add a cap for {key!r} to the profile")
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


def launch_params(variant: Variant):
    """A strategy for ``{param: value}`` over the variant's declared values."""
    if not variant.params:
        return st.just({})
    return st.fixed_dictionaries({p.name: st.sampled_from(p.values) for p in variant.params})


#: Fills drawn together (two thirds of the examples), one per bug class they expose (see
#: :mod:`refconv.problem` for the kinds):
#: * a full-significand operand times a one-hot power of two: every output is one exact product,
#:   so the comparison is bitwise at any n and an input rounded to TF32/bfloat16/float16 shows;
#: * NaN/Inf/huge pixels under zero and tiny weights: kernels that skip those taps;
#: * quarter-valued data: .5 ties (half-up vs half-to-even rounding);
#: * values at the saturation edges.
_COMBOS = {
    "filter2d": ({"image": "random", "weights": "onehot"}, {"image": "special", "weights": "sparse"},
                 {"image": "edge", "weights": "sparse"}, {"image": "random", "weights": "ties"},
                 {"image": "edge", "weights": "edge"}, {"image": "random", "weights": "edge"},
                 {"image": "ties", "weights": "ties"}),
    "conv2d": ({"x": "random", "w": "onehot", "bias": "zero"}, {"x": "onehot", "w": "random", "bias": "zero"},
               {"x": "special", "w": "sparse"}, {"x": "edge", "w": "sparse"}),
    "matvec": ({"m": "random", "v": "onehot"}, {"m": "onehot", "v": "random"}, {"m": "sparse", "v": "special"}),
    "sobel": ({"image": "ties"}, {"image": "ties"}, {"image": "edge"}),
    "kron": ({"a": "edge", "b": "edge"},),
}


def _allowed_kinds(variant, name, dtype):
    kinds = FILL_KINDS if str(dtype).startswith("float") else _INT_FILLS
    allowed = variant.supports.get(f"fill.{name}")
    if allowed is not None:
        kinds = tuple(k for k in kinds if k in allowed)
    return kinds


def _fills(draw, variant, names_dtypes):
    """One fill per input: two times in three a combination from :data:`_COMBOS` that the variant's
    support and the dtypes admit, otherwise (and for inputs it leaves out) independent kinds."""
    kinds = {name: _allowed_kinds(variant, name, dtype) for name, dtype in names_dtypes}
    combos = [c for c in _COMBOS.get(variant.op, ())
              if all(c[n] in kinds[n] for n in kinds if n in c)]
    combo = draw(st.sampled_from(combos)) if combos and draw(st.integers(0, 2)) else {}
    fills = {}
    for name, _ in names_dtypes:
        kind = combo[name] if name in combo else draw(st.sampled_from(kinds[name]))
        seed = draw(st.integers(0, 2**16))
        fills[name] = f"{kind}.{0 if kind in ('zero', 'one', 'ramp') else seed}"
    return fills


def _moduli(params: dict) -> set:
    ints = [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool) and v > 1]
    mods = set(ints)
    for a in ints:  # a thread block of bx threads each doing cf outputs covers bx*cf
        for b in ints:
            mods.add(a * b)
    return mods


def _draw_filter2d(draw, v, prof, moduli):
    dom = lambda k: domain(v, k, prof)  # noqa: E731
    d = {"dtype": _pick(draw, dom("dtype")), "c": _pick(draw, dom("c")),
         "h": _size(draw, dom("h"), moduli), "w": _size(draw, dom("w"), moduli),
         "kh": _pick(draw, dom("kh")), "kw": _pick(draw, dom("kw"))}
    o = {"boundary": _pick(draw, dom("boundary")), "flip": _pick(draw, dom("flip"))}
    if d["dtype"] == "uint8":
        accs = tuple(a for a in dom("accumulator") if a in ("float32", "int", "float64"))
        assume(accs)
        o["accumulator"] = draw(st.sampled_from(accs))
        o["shift"] = _pick(draw, dom("shift"))
        out = _pick(draw, dom("out_dtype"))
        if out is not None:
            o["out_dtype"] = out
        if out is None or not out.startswith("float"):   # rounding / cast apply to integer outputs
            if o["accumulator"] != "int":
                o["rounding"] = _pick(draw, dom("rounding"))
            o["cast"] = _pick(draw, dom("cast"))
    else:
        accs = tuple(a for a in dom("accumulator") if a == d["dtype"])
        if "accumulator" in v.supports:
            assume(accs)
        outs = tuple(x for x in dom("out_dtype") if x in (None, d["dtype"]))
        assume(outs)
        out = draw(st.sampled_from(outs))
        if out is not None:
            o["out_dtype"] = out
    wdt = "float64" if d["dtype"] == "float64" else "float32"
    fills = _fills(draw, v, [("image", d["dtype"]), ("weights", wdt)])
    return d, o, fills


def _conv2d_window_fits(d, o) -> bool:
    """The dilated window fits the padded input: H + 2·pad ≥ dil·(R − 1) + 1 (and likewise W)."""
    p, dl = o["padding"], o["dilation"]
    return d["h"] + 2 * p >= dl * (d["r"] - 1) + 1 and d["w"] + 2 * p >= dl * (d["s"] - 1) + 1


def _draw_conv2d(draw, v, prof, moduli):
    dom = lambda k: domain(v, k, prof)  # noqa: E731
    d = {k: _pick(draw, dom(k)) for k in ("dtype", "n", "c", "m", "r", "s", "groups", "bias")}
    d["h"] = _size(draw, dom("h"), moduli)
    d["w"] = _size(draw, dom("w"), moduli)
    assume(d["c"] % d["groups"] == 0 and d["m"] % d["groups"] == 0)
    o = {k: _pick(draw, dom(k)) for k in ("stride", "padding", "dilation")}
    assume(_conv2d_window_fits(d, o))
    names = [("x", d["dtype"]), ("w", d["dtype"])] + ([("bias", d["dtype"])] if d["bias"] else [])
    return d, o, _fills(draw, v, names)


def _draw_sobel(draw, v, prof, moduli):
    dom = lambda k: domain(v, k, prof)  # noqa: E731
    d = {"dtype": _pick(draw, dom("dtype")), "channels": _pick(draw, dom("channels")),
         "h": _size(draw, dom("h"), moduli), "w": _size(draw, dom("w"), moduli)}
    assume(d["channels"] == 0 or d["dtype"] == "uint8")
    o = {"magnitude": _pick(draw, dom("magnitude")), "boundary": _pick(draw, dom("boundary")),
         "out_dtype": _pick(draw, dom("out_dtype"))}
    if not o["out_dtype"].startswith("float"):     # rounding / cast apply to integer outputs
        o["cast"] = _pick(draw, dom("cast"))
        o["rounding"] = _pick(draw, dom("rounding"))
    else:
        assume(d["dtype"] != "float64" or o["out_dtype"] != "float32")
    return d, o, _fills(draw, v, [("image", d["dtype"])])


def _draw_matvec(draw, v, prof, moduli):
    dom = lambda k: domain(v, k, prof)  # noqa: E731
    d = {"dtype": _pick(draw, dom("dtype")), "rows": _size(draw, dom("rows"), moduli),
         "cols": _size(draw, dom("cols"), moduli)}
    return d, {}, _fills(draw, v, [("m", d["dtype"]), ("v", d["dtype"])])


def _draw_kron(draw, v, prof, moduli):
    dom = lambda k: domain(v, k, prof)  # noqa: E731
    d = {"dtype": _pick(draw, dom("dtype"))}
    for k in ("m", "n", "p", "q"):
        d[k] = _size(draw, dom(k), moduli)
    return d, {}, _fills(draw, v, [("a", d["dtype"]), ("b", d["dtype"])])


_DRAW = {"filter2d": _draw_filter2d, "conv2d": _draw_conv2d, "sobel": _draw_sobel,
         "matvec": _draw_matvec, "kron": _draw_kron}


class _Moduli(set):
    """The launch-parameter moduli of one draw, with the profile's multiples k."""
    multiples = (1, 2, 3)


@st.composite
def cases(draw, variant: Variant, profile: Profile | str = "ci"):
    """A strategy for ``(problem, params)`` pairs inside ``variant``'s declared support (and the
    profile's caps, whole configurations and host-memory budget)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    params = draw(launch_params(variant))
    shapes = prof.shapes.get(variant.op)
    if shapes and draw(st.integers(0, 99)) < round(100 * prof.shape_weight):
        prof = dataclasses.replace(prof)         # a private copy: its id keys the fixed sizes
        _FIXED[id(prof)] = draw(st.sampled_from(shapes))
    moduli = _Moduli(_moduli(params))
    moduli.multiples = prof.multiples
    try:
        d, o, fills = _DRAW[variant.op](draw, variant, prof, moduli)
    finally:
        _FIXED.pop(id(prof), None)
    problem = Problem(variant.op, d, o, fills)
    assume(host_bytes(problem, variant) <= prof.host_fraction * host_memory())
    if variant.constraint is not None:
        assume(variant.constraint(problem, params) is None)
    return problem, params


def host_memory() -> int:
    """Physical memory of this machine in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 << 30


def _output_elements(problem: Problem) -> int:
    d, o = problem.dims, problem.options
    if problem.op == "filter2d":
        return max(d["c"], 1) * d["h"] * d["w"]
    if problem.op == "sobel":
        return d["h"] * d["w"]
    if problem.op == "conv2d":
        pad = o.get("padding", 0)
        pad = max(pad) if isinstance(pad, tuple) else pad
        return d["n"] * d["m"] * (d["h"] + 2 * pad) * (d["w"] + 2 * pad)
    if problem.op == "matvec":
        return d["rows"]
    if problem.op == "kron":
        return d["m"] * d["n"] * d["p"] * d["q"]
    return 0


def host_bytes(problem: Problem, variant: Variant | None = None) -> int:
    """An upper estimate of the host memory one check of ``problem`` holds: the inputs, and the
    output buffer unless ``variant`` streams it (``output="rows"``), at 8 bytes an element."""
    n = sum(int(np.prod(s, dtype=np.int64)) for s in problem.input_shapes().values())
    if variant is None or variant.output != "rows":
        n += _output_elements(problem)
    return 8 * n


def problems(variant: Variant, profile: Profile | str = "ci"):
    """A strategy for problems only (launch parameters at their defaults)."""
    return cases(variant, profile).map(lambda pp: pp[0])


def outside_support(variant: Variant, problem: Problem, params: dict) -> str | None:
    """Why ``(problem, params)`` is not a case the strategies could draw for ``variant`` (a dim
    outside its domain, the op's cross-dimension rules, ``variant.constraint``), or ``None``.
    Used to keep cases built outside Hypothesis (a shrunk hang) inside the declared support."""
    d, o = problem.dims, problem.options
    for k, val in d.items():
        dom = domain(variant, k)
        if val not in dom:
            return f"{k}={val!r} outside {dom!r}"
    if problem.op == "conv2d":
        if d["c"] % d["groups"] or d["m"] % d["groups"]:
            return f"groups={d['groups']} does not divide c={d['c']} and m={d['m']}"
        if not _conv2d_window_fits(d, o):
            return "the dilated window does not fit the padded input"
    if problem.op == "sobel" and not (d["channels"] == 0 or d["dtype"] == "uint8"):
        return f"channels={d['channels']} needs dtype uint8"
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


def describe_case(problem: Problem, params: dict) -> str:
    ps = " ".join(f"{k}={v}" for k, v in params.items())
    return problem.descriptor() + (f" @ {ps}" if ps else "")


def parse_params(s: str) -> dict[str, Any]:
    """Inverse of the ``@ k=v ...`` part of :func:`describe_case`."""
    out = {}
    for item in s.split():
        k, _, v = item.partition("=")
        out[k] = int(v) if v.lstrip("-").isdigit() else ({"True": True, "False": False}.get(v, v))
    return out
