"""Strategies draw only inside a variant's declared support, and hunt the edges they promise."""
from hypothesis import given, settings, strategies as st, HealthCheck

from refconv import Param, Range, Variant
from refconv.strategies import cases

PAPER = Variant("filter2d", "meta", "paper", run=lambda p, out, **k: None, writes="interior",
                supports={"dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",),
                          "flip": (False,), "accumulator": ("int",), "shift": (4,), "cast": ("wrap",), "out_dtype": (None,),
                          "h": Range(3, 40), "w": Range(3, 40), "fill.weights": ("exact", "one")},
                params=(Param("bx", (4, 8, 16), 16), Param("cf", (1, 12), 1)))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_drawn_filter2d_problems_stay_inside_the_declared_support(data):
    problem, params = data.draw(cases(PAPER, "thorough"))
    d, o = problem.dims, problem.options
    assert d["dtype"] == "uint8" and d["c"] == 0 and d["kh"] == d["kw"] == 3
    assert 3 <= d["h"] <= 40 and 3 <= d["w"] <= 40
    assert o["boundary"] == "valid" and o["accumulator"] == "int" and o["shift"] == 4 and o["cast"] == "wrap"
    assert problem.fills["weights"].split(".")[0] in ("exact", "one")
    assert params["bx"] in (4, 8, 16) and params["cf"] in (1, 12)


def test_profile_caps_shapes_but_never_below_the_support_minimum():
    from refconv.strategies import domain
    from refconv.profiles import get_profile
    v = Variant("matvec", "meta", "big", run=lambda p, out, **k: None, supports={"rows": Range(100, 200)})
    assert domain(v, "rows", get_profile("ci")).lo == 100 and domain(v, "rows", get_profile("ci")).hi == 100
    assert domain(v, "rows", get_profile("thorough")).hi == 200


def test_sizes_that_are_not_multiples_of_the_launch_params_are_drawn():
    seen_off_by_one = set()

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(PAPER, "thorough"))
    def collect(case):
        problem, params = case
        w = problem.dims["w"]
        for m in (params["bx"], params["bx"] * params["cf"]):
            if w % m in (1, m - 1):
                seen_off_by_one.add(m)

    collect()
    assert {4, 8, 16} & seen_off_by_one
