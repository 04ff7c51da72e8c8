"""A failing directed case is shrunk as far as a random one (issue 43: a counterexample was left at
h=4, w=8, k=4 where h=w=2, k=2 fails too): its sizes, its integer options and its launch
parameters move toward their simplest values, together where a rule ties them, while the case
fails the same way (:mod:`refconv.directed_shrink`)."""
from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from helpers import ROOT
from refconv import Param, Problem, Variant, ops, specs
from refconv.directed_shrink import shrink_case
from refconv.runner import check_variant

EXAMPLE = ROOT / "examples" / "refconv-boxsum-op" / "src" / "refconv_boxsum" / "__init__.py"


@pytest.fixture
def boxsum():
    """The example op ``boxsum2d`` (dims h, w; option k with the rule h, w >= k), registered."""
    spec = importlib.util.spec_from_file_location("refconv_boxsum_for_shrink", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        yield mod
    finally:
        ops.unregister_op("boxsum2d")


def test_a_window_option_shrinks_with_the_sizes_it_bounds(boxsum):
    # the report's case: fails whenever k >= 2; h and w cannot go below k, so k must move too
    v = boxsum.backend.variants()[0]
    start = Problem("boxsum2d", {"dtype": "float32", "h": 4, "w": 8}, {"k": 4}, {"image": "random.1"})
    tried = []

    def run(problem, params):
        tried.append(problem.descriptor())
        return SimpleNamespace(status="fail" if problem.options["k"] >= 2 else "pass")
    problem, params, r = shrink_case(v, start, {"rows": 8}, "fail", run)
    assert (problem.dims["h"], problem.dims["w"], problem.options["k"]) == (2, 2, 2), tried
    assert params == {"rows": 1} and r.status == "fail"      # the launch parameter too: nothing needs 8
    assert len(tried) <= 20


def test_nothing_smaller_failing_leaves_the_case_as_it_was(boxsum):
    v = boxsum.backend.variants()[1]
    start = Problem("boxsum2d", {"dtype": "float32", "h": 3, "w": 3}, {"k": 3}, {"image": "random.1"})
    problem, params, r = shrink_case(v, start, {}, "fail",
                                     lambda p, prm: SimpleNamespace(status="fail" if p.descriptor() == start.descriptor()
                                                                    else "pass"))
    assert r is None and problem is start and params == {}


def _one_block_of_rows(problem, out, bx=8, block=16):
    """A wrong kernel: it launches one block of rows only, so rows past ``block`` are never written."""
    args, kwargs = problem.spec_args()
    out[..., :block, :] = specs.filter2d(*args, **kwargs)[..., :block, :]


def test_a_kernel_failing_a_directed_case_is_reported_at_the_smallest_launch_and_size():
    v = Variant("filter2d", "wrong", "one_block_of_rows", run=_one_block_of_rows, supports={"dtype": ("float32",)},
                params=(Param("bx", (8, 16), 8), Param("block", (4, 8, 16), 16)))
    unshrunk = check_variant(v, "ci", seed=0, db="none", failures_dir=None, shrink=False)
    r = check_variant(v, "ci", seed=0, db="none", failures_dir=None)
    assert unshrunk.status == r.status == "fail" and r.failed_case, r.reason
    d = Problem.parse(r.failure["descriptor"]).dims
    assert r.failure["params"]["block"] == 4 and d["h"] == 5, (r.failure, unshrunk.failure)   # one row past a block
    assert (d["w"], d["kh"], d["kw"]) == (1, 1, 1)
    assert r.shrink_examples > 0 and "never written" in r.reason
