"""Shrinking a failing directed case (:mod:`refconv.directed`) as far as Hypothesis shrinks a random one.

A directed case is built at sizes chosen for its bug class (a window as large as the image, a
block and a partial one), not the smallest that shows the failure, and Hypothesis never sees it.
:func:`shrink_case` searches smaller cases near it, each checked like an example and kept while
it still fails the same way (``fail`` stays ``fail``, ``error`` stays ``error``) inside the
variant's support and the op's rules:

* every *integer* key of the case is a candidate: the ranged and integer dims, the integer spec
  options (a window size ``k``, ``stride``, ``shift``), the integer launch parameters;
* a key is moved toward its simplest value (its domain's value nearest 0: a ``Range``'s low end,
  or 0 where the range holds it; a launch parameter's smallest value): to that value, half-way,
  one step;
* each round tries each key alone at its simplest value, then all dims and options together
  half-way (sizes tied by a rule such as ``h >= k`` move as one: ``h=4, w=8, k=4`` to ``h=2, w=4,
  k=2``), then each key alone half-way or one step;
* the fills, string options and the dtype stay: they carry the bug class.

The search stops after ``budget`` checked candidates, or when no move keeps the failure.
"""
from __future__ import annotations

from typing import Callable

from .problem import Problem
from .strategies import domain, outside_support
from .variant import Range, Variant

#: at most this many examples shrink a failing directed case
SHRINK_BUDGET = 60


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _target(values, cur: int) -> int:
    """The simplest value of a domain (``Range`` or tuple) for an integer key now at ``cur``."""
    if isinstance(values, Range):
        hi = values.hi if values.hi is not None else max(cur, values.lo)
        return min(max(0, values.lo), hi)
    ints = [v for v in values if _is_int(v)]
    return min(ints, key=lambda v: (abs(v), v)) if ints else cur


def _half(cur: int, target: int) -> int:
    """Half-way from ``cur`` to ``target`` (the target itself when they are neighbours)."""
    h = target + (cur - target) // 2
    return target if h == cur else h


def _toward(cur: int, target: int) -> list[int]:
    """The candidates from ``cur`` toward ``target``: the target, half-way, one step; no repeats."""
    if cur == target:
        return []
    step = 1 if target > cur else -1
    return list(dict.fromkeys(c for c in (target, _half(cur, target), cur + step) if c != cur))


def _keys(variant: Variant, problem: Problem, params: dict) -> list[tuple[str, str]]:
    """The integer keys of the case: ``("dim", k)``, ``("option", k)``, ``("param", k)``."""
    out = [("dim", k) for k, v in problem.dims.items() if _is_int(v)]
    out += [("option", k) for k, v in problem.options.items() if _is_int(v) and k in problem.record.options]
    out += [("param", p.name) for p in variant.params if _is_int(params.get(p.name))
            and all(_is_int(v) for v in p.values)]
    return out


def _value(problem: Problem, params: dict, where: str, k: str) -> int:
    return {"dim": problem.dims, "option": problem.options, "param": params}[where][k]


def _candidates(variant: Variant, problem: Problem, params: dict, where: str, k: str) -> list[int]:
    cur = _value(problem, params, where, k)
    if where == "param":
        values = next(p.values for p in variant.params if p.name == k)
        smaller = sorted((v for v in values if abs(v) < abs(cur)), key=abs)
        return list(dict.fromkeys(smaller[:1] + smaller[-1:]))
    dom = domain(variant, k)
    return [c for c in _toward(cur, _target(dom, cur)) if c in dom]


def _with(variant: Variant, problem: Problem, params: dict, moves: dict) -> tuple | None:
    """The case with ``moves`` (``(where, key) -> value``) applied, or None when it is outside the
    spec's rules or the variant's support."""
    dims, opts, prm = dict(problem.dims), dict(problem.options), dict(params)
    for (where, k), v in moves.items():
        {"dim": dims, "option": opts, "param": prm}[where][k] = v
    try:
        smaller = Problem(problem.op, dims, opts, problem.fills, layouts=problem.layouts)
    except (ValueError, TypeError):
        return None
    if any(opts[k] not in domain(variant, k) for where, k in moves if where == "option"):
        return None
    if outside_support(variant, smaller, prm) is not None:
        return None
    return smaller, prm


def shrink_case(variant: Variant, problem: Problem, params: dict, status: str,
                run: Callable, budget: int = SHRINK_BUDGET) -> tuple:
    """A smaller case near the failing ``(problem, params)`` whose check still has ``status``
    (see the module docstring).  ``run(problem, params)`` checks one candidate: its
    :class:`refconv.checking.ExampleResult`, or None when the spec refuses it (not counted).
    Returns ``(problem, params, result)``, ``result`` None when nothing smaller failed."""
    tries, best = 0, None
    seen = {(problem.descriptor(), tuple(sorted(params.items())))}

    def attempt(moves) -> bool:
        nonlocal tries, problem, params, best
        case = _with(variant, problem, params, moves)
        if case is None or tries >= budget:
            return False
        key = (case[0].descriptor(), tuple(sorted(case[1].items())))
        if key in seen:
            return False
        seen.add(key)
        r = run(*case)
        if r is None:
            return False
        tries += 1
        if r.status != status:
            return False
        (problem, params), best = case, r
        return True

    improved = True
    while improved and tries < budget:
        keys = _keys(variant, problem, params)
        # 1. each key alone to its simplest value (the largest steps first)
        improved = any([attempt({key: c[0]}) for key in keys
                        if (c := _candidates(variant, problem, params, *key))])
        # 2. every dim and option half-way at once (keys tied by a rule move together)
        joint = {}
        for where, k in _keys(variant, problem, params):
            if where != "param":
                dom, cur = domain(variant, k), _value(problem, params, where, k)
                half = _half(cur, _target(dom, cur))
                if half != cur and half in dom:
                    joint[(where, k)] = half
        improved = (len(joint) > 1 and attempt(joint)) or improved
        # 3. each key alone, half-way or one step
        for key in _keys(variant, problem, params):
            for c in _candidates(variant, problem, params, *key)[1:]:
                if attempt({key: c}):
                    improved = True
                    break
    return problem, params, best
