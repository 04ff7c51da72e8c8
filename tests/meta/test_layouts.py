"""Strided inputs (issue 40): a variant that declares ``layouts=("contiguous", "strided")`` is
drawn inputs with a row pitch, a step or transposed storage, holding the same values; the spec
sees the logical, C-contiguous arrays; every other variant draws exactly as before."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from refconv import Problem, Range, Variant
from refconv.problem import lay_out
from refconv import strategies
from refconv.strategies import cases, outside_support

MATVEC = {"dtype": ("float32",), "rows": Range(1, 12), "cols": Range(1, 12)}
STRIDED = Variant("matvec", "meta", "strided", run=lambda p, out: None, supports=MATVEC,
                  layouts=("contiguous", "strided"))
PLAIN = Variant("matvec", "meta", "plain", run=lambda p, out: None, supports=MATVEC)


@pytest.mark.parametrize("token, strides", [("c", (20, 4)), ("t", (4, 12)), ("pitch3", (32, 4)), ("step2", (40, 8))])
def test_each_layout_holds_the_same_values_with_its_own_strides_read_only(token, strides):
    a = np.arange(15, dtype=np.float32).reshape(3, 5)
    v = lay_out(a, token)
    assert v.shape == a.shape and (v == a).all() and v.strides == strides
    assert not v.flags.writeable or token == "c"


def test_the_gaps_of_a_strided_layout_hold_nan_or_the_bytes_0xa5():
    f = lay_out(np.zeros((2, 3), np.float32), "pitch2")
    i = lay_out(np.zeros((2, 3), np.int32), "pitch2")
    assert np.isnan(f.base.reshape(2, 5)[:, 3:]).all()
    assert (i.base.reshape(2, 5)[:, 3:].view(np.uint32) == 0xA5A5A5A5).all()


def test_a_strided_problem_round_trips_its_descriptor_and_gives_the_spec_contiguous_arrays():
    p = Problem("matvec", {"dtype": "float32", "rows": 3, "cols": 5}, {}, {"m": "random.1", "v": "random.2"},
                {"m": "t", "v": "step3"})
    line = p.descriptor()
    assert line.endswith(":m=t,v=step3")
    q = Problem.parse(line)
    assert q == p and q.layouts == {"m": "t", "v": "step3"}
    assert not q.inputs["m"].flags.c_contiguous and q.inputs["v"].strides == (12,)
    args, _ = q.spec_args()
    assert all(a.flags.c_contiguous for a in args)
    assert (args[0] == q.inputs["m"]).all() and (args[1] == q.inputs["v"]).all()
    assert Problem("matvec", p.dims, {}, p.fills).descriptor().count(":") == 3       # contiguous: 4 fields


def test_a_layout_outside_the_accepted_ones_is_refused_naming_them():
    with pytest.raises(ValueError, match="accepted: c, t, pitchK"):
        Problem("matvec", {"dtype": "float32", "rows": 3, "cols": 5}, {}, {}, {"m": "pitch0"})
    with pytest.raises(ValueError, match="no such input"):
        Problem("matvec", {"dtype": "float32", "rows": 3, "cols": 5}, {}, {}, {"x": "t"})
    with pytest.raises(ValueError, match="layouts=.*accepted"):
        Variant("matvec", "meta", "bad", run=lambda p, out: None, layouts=("rowmajor",))


def test_strided_layouts_are_drawn_for_a_variant_that_declares_them():
    seen = set()

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(STRIDED, "ci"))
    def collect(case):
        problem, _ = case
        for name, a in problem.inputs.items():
            tok = problem.layouts.get(name, "c")
            seen.add((name, tok.rstrip("0123456789")))
            assert np.array_equal(a, problem.logical_inputs[name], equal_nan=True)
            assert a.flags.c_contiguous == (tok == "c") or a.size <= 1 or min(a.shape) == 1

    collect()
    assert seen >= {("m", "c"), ("m", "pitch"), ("m", "step"), ("m", "t"), ("v", "c"), ("v", "step")}, seen


def test_a_variant_that_does_not_declare_them_draws_no_layout_and_refuses_one(monkeypatch):
    def never(*a, **k):
        raise AssertionError("layouts drawn for a variant that takes contiguous inputs only")
    monkeypatch.setattr(strategies, "_layouts", never)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(PLAIN, "ci"))
    def collect(case):
        problem, _ = case
        assert problem.layouts == {} and all(a.flags.c_contiguous for a in problem.inputs.values())

    collect()
    strided = Problem("matvec", {"dtype": "float32", "rows": 3, "cols": 5}, {}, {}, {"m": "pitch1"})
    assert "strided inputs" in outside_support(PLAIN, strided, {})
    assert outside_support(STRIDED, strided, {}) is None


def test_a_saved_strided_case_replays_with_its_layouts_from_the_saved_arrays():
    from refconv.repro import _dec, _enc
    p = Problem("matvec", {"dtype": "float32", "rows": 4, "cols": 3}, {}, {"m": "random.5", "v": "random.6"},
                {"m": "pitch2", "v": "step2"})
    saved = {k: _enc(v) for k, v in p.inputs.items()}          # what a reproducer file holds
    q = Problem.parse(p.descriptor()).with_inputs({k: _dec(v) for k, v in saved.items()})
    assert q.inputs["m"].strides == p.inputs["m"].strides == (20, 4)
    assert all(np.array_equal(q.inputs[k], p.inputs[k]) for k in p.inputs)


def test_the_host_memory_estimate_counts_a_strided_layouts_wider_array():
    from refconv.strategies import host_bytes
    dims = {"dtype": "float32", "rows": 10, "cols": 10}
    plain = host_bytes(Problem("matvec", dims))
    assert host_bytes(Problem("matvec", dims, {}, {}, {"m": "step3"})) == plain + 8 * 10 * 30
    assert host_bytes(Problem("matvec", dims, {}, {}, {"m": "t", "v": "step2"})) == plain + 8 * (100 + 20)
