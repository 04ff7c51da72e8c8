"""The cost of one example on a simulator, and the budget a profile gives it.

On a simulator the time of an example is set by the *simulated work* of its launch, not by the
problem's size alone: a matvec kernel with one block per row took 0.01 s of CPU at ``threads=2``
and 15 s at ``threads=512`` on the same 40 x 40 matrix under a GPU simulator.  So that
the time of a profile's run does not depend on which launch parameters a seed happens to draw,

* a variant may declare ``cost(problem, params)``: the simulated work of one example in *work
  units* -- about one simulated thread doing one step of its loop (see :func:`example_cost`);
  without it the cost is derived from the sizes (:func:`default_cost`: the problem's
  multiply-adds, else its elements);
* a profile declares ``sim_work``, the most work units one example may cost when the variant's
  backend runs on a simulator (:func:`work_budget`; the backend says so in its
  :class:`refconv.variant.Target`), and the strategies draw launch parameters and sizes inside
  that budget (:mod:`refconv.strategies`) rather than rejecting draws over it.

On a real target there is no budget: the profile's size caps are the bound.
"""
from __future__ import annotations

from typing import Mapping

from .problem import Problem


def default_cost(problem: Problem) -> float:
    """The work units of ``problem`` for a variant that declares no cost: its multiply-adds (half
    the op record's FLOP count: one thread step per multiply-add), else its input and output
    elements (an op that declares no FLOP count)."""
    shape, _ = problem.record.output_layout(problem.dims, problem.options)
    n_out = 1
    for n in shape:
        n_out *= int(n)
    try:
        return max(1.0, problem.record.count_flops(problem.dims, problem.options, n_out) / 2)
    except ValueError:   # the op declares no flops count
        n_in = 0
        for s in problem.input_shapes().values():
            k = 1
            for n in s:
                k *= int(n)
            n_in += k
        return float(n_in + n_out)


def example_cost(variant, problem: Problem, params: Mapping) -> float:
    """The work units one example of ``variant`` on ``(problem, params)`` costs on a simulator:
    the variant's declared ``cost``, else :func:`default_cost`."""
    if variant.cost is not None:
        return float(variant.cost(problem, dict(params)))
    return default_cost(problem)


def work_budget(variant, profile) -> float | None:
    """The work units one example of ``variant`` may cost under ``profile``: the profile's
    ``sim_work`` when the variant's backend runs on a simulator now, else None (no budget)."""
    budget = getattr(profile, "sim_work", None)
    if budget is None:
        return None
    from . import registry
    t = registry.target(variant.backend)
    return float(budget) if t is not None and t.simulated else None
