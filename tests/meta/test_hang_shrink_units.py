"""The pieces of the hang shrinker that need no worker process: the probe ladder and the
support check that keeps shrunk cases inside a variant's declared support."""
import pytest

from refconv.hang_shrink import _ladder, shrink_hang
from refconv.problem import Problem
from refconv.strategies import outside_support
from refconv.variant import Param, Range, Variant


def _v(**kw):
    return Variant(op="matvec", backend="t", name="v", run=lambda p, out, **k: None,
                   supports={"rows": Range(2, 64), "dtype": ("float32",), "fill.m": ("zero", "random")},
                   params=(Param("tpb", (32, 64)),), **kw)


def _p(rows=10, cols=5, m="random.3"):
    return Problem("matvec", {"dtype": "float32", "rows": rows, "cols": cols}, {}, {"m": m, "v": "zero.0"})


def test_ladder_probes_ascending_from_the_lower_bound_and_stays_below_the_current_value():
    assert _ladder(1, 25) == [1, 2, 3, 5, 9, 17]
    assert _ladder(4, 5) == [4]
    assert _ladder(1, 1) == []
    assert all(x < 1000 for x in _ladder(0, 1000)) and _ladder(0, 1000) == sorted(set(_ladder(0, 1000)))


def test_outside_support_names_the_dim_the_fill_and_the_param():
    v = _v()
    assert outside_support(v, _p(), {"tpb": 32}) is None
    assert "rows=1" in outside_support(v, _p(rows=1), {"tpb": 32})
    assert "fill m=one.0" in outside_support(v, _p(m="one.0"), {"tpb": 32})
    assert "tpb=48" in outside_support(v, _p(), {"tpb": 48})


def test_outside_support_applies_the_variant_constraint():
    v = _v(constraint=lambda p, ps: "rows must be even" if p.dims["rows"] % 2 else None)
    assert outside_support(v, _p(rows=10), {"tpb": 32}) is None
    assert outside_support(v, _p(rows=9), {"tpb": 32}) == "rows must be even"


def test_outside_support_applies_the_conv2d_cross_dimension_rules():
    v = Variant(op="conv2d", backend="t", name="c", run=lambda p, out, **k: None)
    d = {"dtype": "float32", "n": 1, "c": 2, "m": 2, "h": 5, "w": 5, "r": 3, "s": 3, "groups": 1, "bias": False}
    ok = Problem("conv2d", d, {"stride": 1, "padding": 0, "dilation": 1}, {})
    assert outside_support(v, ok, {}) is None
    small = Problem("conv2d", {**d, "h": 2}, {"stride": 1, "padding": 0, "dilation": 1}, {})
    assert "window" in outside_support(v, small, {})


@pytest.mark.parametrize("kw, word", [({"budget": 0}, "budget"), ({"timeout": 0}, "timeout")])
def test_shrink_hang_refuses_a_non_positive_budget_or_timeout(kw, word):
    args = {"timeout": 1.0, "budget": 1.0, "backend_options": {}, **kw}
    with pytest.raises(ValueError, match=word):
        shrink_hang(_v(), _p(), {"tpb": 32}, **args)
