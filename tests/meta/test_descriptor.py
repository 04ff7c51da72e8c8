"""The one-line problem descriptor round-trips, and bad descriptors are rejected by name."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from refconv import Param, Problem, Range, Variant
from refconv.case import Case
from refconv.strategies import cases

ANY = {op: Variant(op, "meta", "any", run=lambda p, out, **k: None) for op in ("filter2d", "conv2d", "sobel", "matvec", "kron")}


@pytest.mark.parametrize("op", sorted(ANY))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_descriptor_round_trips_and_regenerates_identical_inputs(op, data):
    problem, params = data.draw(cases(ANY[op], "dev"))
    line = problem.descriptor()
    again = Problem.parse(line)
    assert again == problem and again.descriptor() == line
    for name, a in problem.inputs.items():
        b = again.inputs[name]
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_case_line_carries_launch_params():
    v = Variant("matvec", "meta", "p", run=lambda p, out, **k: None, params=(Param("block", (4, 8), 8), Param("mode", ("a", "b"))))
    p = Problem("matvec", {"dtype": "float32", "rows": 3, "cols": 5}, {}, {"m": "exact.1", "v": "ramp.0"})
    line = str(Case(p, {"block": 4, "mode": "b"}))
    assert line == p.descriptor() + " @ block=4 mode=b"
    c = Case.parse(line)
    assert c == Case(p, {"block": 4, "mode": "b"}) and c.problem == p and c.params == {"block": 4, "mode": "b"}
    assert Case.descriptor_of(line) == p.descriptor() and Case.join(p.descriptor(), c.params) == line


def test_case_without_params_has_no_separator_and_parses_back():
    p = Problem("kron", {"dtype": "float64", "m": 2, "n": 1, "p": 3, "q": 2}, {}, {"a": "random.1", "b": "ramp.0"})
    line = str(Case(p, {}))
    assert line == p.descriptor() and "@" not in line
    assert Case.parse(line) == Case(p) and Case.parse(line).params == {}
    assert Case.descriptor_of(None) == "" and Case.join(p.descriptor(), None) == line
    assert Case.parse(str(Case(p, {"neg": -3, "flag": True, "name": "x"}))).params == {"neg": -3, "flag": True, "name": "x"}


@pytest.mark.parametrize("line, word", [
    ("matvec:dtype=float32,rows=3", "OP:DIMS:OPTIONS:FILLS"),
    ("nope:dtype=float32::", "op 'nope'"),
    ("matvec:dtype=float32,rows=3::", "missing dims ['cols']"),
    ("matvec:dtype=float32,rows=3,cols=2,zz=1::", "unknown dims ['zz']"),
    ("matvec:dtype=float32,rows=3,cols=2::m=bogus.1", "fill for 'm'"),
    ("matvec:dtype=float32,rows=3,cols=2:x:", "not KEY=VALUE"),
])
def test_bad_descriptor_names_the_bad_part(line, word):
    with pytest.raises(ValueError, match=None) as e:
        Problem.parse(line)
    assert word in str(e.value)


def test_special_fill_has_nan_and_inf_and_exact_fill_is_small_integers_or_quarters():
    p = Problem("matvec", {"dtype": "float32", "rows": 16, "cols": 16}, {}, {"m": "special.3", "v": "exact.1"})
    m = p.inputs["m"]
    assert np.isnan(m).any() or np.isinf(m).any()
    f = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 4, "w": 4, "kh": 3, "kw": 3}, {},
                {"image": "exact.1", "weights": "exact.2"}).inputs["weights"]
    assert np.all(f * 4 == np.round(f * 4)) and np.all(np.abs(f) <= 8)
