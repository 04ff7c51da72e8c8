"""The cost of an example on a simulator (issue 27.1): a variant's declared ``cost`` (else one
derived from the sizes) is bounded by the profile's ``sim_work`` when its backend runs on a
simulator, and the strategies draw launch parameters and sizes inside that budget instead of
rejecting draws over it."""
from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis import find

from refconv import Param, Range, Variant, registry
from refconv.cost import default_cost, example_cost, work_budget
from refconv.problem import Problem
from refconv.profiles import get_profile
from refconv.strategies import _cases, launch_params

CI = get_profile("ci")


def _toy(cost, values=(1, 1000)):
    return Variant("matvec", "meta", "toy", run=lambda p, out, **k: None,
                   supports={"dtype": ("float32",), "rows": Range(1, 40), "cols": Range(1, 40)},
                   params=(Param("t", values),), cost=cost)


def _matvec(rows, cols):
    return Problem("matvec", {"dtype": "float32", "rows": rows, "cols": cols}, {}, {})


def test_default_cost_is_the_problems_multiply_adds():
    assert default_cost(_matvec(3, 5)) == 15          # 3 rows of 5 multiply-adds
    v = _toy(None)
    assert example_cost(v, _matvec(7, 2), {"t": 1000}) == 14


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_sizes_are_drawn_inside_the_work_budget(data):
    v = _toy(lambda p, params: params["t"] * p.dims["rows"] * p.dims["cols"])
    problem, params = data.draw(_cases(v, CI, 100.0))
    assert params["t"] == 1                            # t=1000 costs 1000 on the smallest problem
    assert problem.dims["rows"] * problem.dims["cols"] <= 100


def test_the_budget_is_reached_not_only_small_problems():
    v = _toy(lambda p, params: params["t"] * p.dims["rows"] * p.dims["cols"])
    big = find(_cases(v, CI, 100.0), lambda c: c[0].dims["rows"] * c[0].dims["cols"] >= 90,
               settings=settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck)))
    assert 90 <= big[0].dims["rows"] * big[0].dims["cols"] <= 100


def test_a_variant_whose_every_launch_is_over_the_budget_still_gets_its_cheapest():
    v = _toy(lambda p, params: params["t"] * 1000, values=(3, 2, 5))
    drawn = find(launch_params(v, CI, 10.0), lambda p: True)
    assert drawn == {"t": 2}
    assert find(_cases(v, CI, 10.0), lambda c: True)[0].dims["rows"] == 1


def test_the_budget_applies_only_where_the_backend_runs_on_a_simulator():
    sim = registry.get("matvec/numba_cuda/block_per_row")    # the tests run numba_cuda on the simulator
    cpu = registry.get("matvec/numba_cpu/" + registry.variants(op="matvec", backend="numba_cpu")[0].name)
    assert work_budget(sim, CI) == CI.sim_work and work_budget(cpu, CI) is None
    assert work_budget(sim, dataclasses.replace(CI, sim_work=None)) is None


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_block_per_row_draws_stay_inside_the_ci_budget_on_the_simulator(data):
    # at threads=512 a 40 x 40 matrix took 15 s of CPU under the simulator: over the ci budget,
    # and inside the ci size caps, so only the budget keeps it out
    v = registry.get("matvec/numba_cuda/block_per_row")
    assert example_cost(v, _matvec(40, 40), {"threads": 512}) > CI.sim_work
    from refconv.strategies import cases
    problem, params = data.draw(cases(v, CI))
    assert example_cost(v, problem, params) <= CI.sim_work
