"""Issue 23 point 1: directed cases.  Every variant runs the directed cases its support admits
before the random draws (``refconv.directed``, from each op record's table), so a bug class with
a directed case is caught in every run, whatever the seed; a case outside a variant's support is
skipped, not failed."""
import pytest

from .wrong_impls import BUGS, _spec

from refconv import Param, Variant
from refconv import ops
from refconv.checking import check_example
from refconv.directed import directed_cases
from refconv.runner import check_variant
from refconv.strategies import outside_support

#: bug class (tests/meta/wrong_impls.py) -> the directed rows that are there for it
ROW_FOR_BUG = {
    "x86_int_conversion": {"int32-limit"},
    "sobel_half_up": {"ties", "ties-any"},
    "skip_zero_weight_taps": {"sparse-nan"},
    "skip_tiny_weight_taps": {"sparse-nan", "sparse-max"},
    "tf32_matvec_n1000": {"onehot-v", "onehot-m"},
    "tf32_conv2d_n1000": {"onehot-w", "onehot-x"},
    "tf32_matvec": {"onehot-v", "onehot-m"},
    "float64_accumulator_in_float32": {"acc-precision"},
    "filter2d_uint8_saturation": {"saturation-wide"},
    "sobel_uint8_saturation": {"saturation-wide"},
    "int8_symmetric_saturation": {"saturation-int8"},
    "filter2d_half_up": {"ties"},
    "trunc_as_floor": {"trunc-negative"},
}


def _row(label: str) -> str:
    return label.split(" + ")[0]


def test_every_bug_class_has_its_row():
    assert set(ROW_FOR_BUG) == set(BUGS)
    for bug, rows in ROW_FOR_BUG.items():
        names = {r.name for r in ops.get(BUGS[bug].op).directed}
        assert rows & names, (bug, rows, names)


@pytest.mark.parametrize("bug", sorted(ROW_FOR_BUG))
def test_the_directed_row_for_a_bug_class_catches_it(bug):
    v = BUGS[bug]
    cases = [c for c in directed_cases(v, "ci").cases if _row(c.label) in ROW_FOR_BUG[bug]]
    assert cases, f"{v.id}: no directed case from {ROW_FOR_BUG[bug]}"
    assert any(check_example(v, c.problem, c.params).status == "fail" for c in cases), [c.label for c in cases]


@pytest.mark.parametrize("bug", sorted(ROW_FOR_BUG))
def test_one_seeded_ci_run_catches_the_bug_class_in_a_directed_case(bug):
    r = check_variant(BUGS[bug], "ci", seed=12345, db="none", failures_dir=None, shrink=False)
    assert r.status == "fail", r.statistics
    assert r.failed_case, "caught by a random draw, not by a directed case"
    assert r.examples == 0 and r.directed >= 1
    assert r.reason.startswith(f"directed case {r.failed_case}: ")


def _correct(op, name, supports, params=(), constraint=None):
    """A correct variant (the spec itself) with launch ``params`` that it ignores."""
    def run(problem, out, **launch):
        out[...] = _spec(problem)
    return Variant(op, "test", name, run=run, supports=supports, params=tuple(params), constraint=constraint)


def test_a_directed_row_outside_the_support_is_skipped_not_failed():
    # a float32-only correct filter2d: the int-accumulator and saturation rows need a uint8 image
    v = _correct("filter2d", "float_only", {"dtype": ("float32",)})
    table = directed_cases(v, "ci")
    assert {"int32-limit", "acc-precision", "saturation-wide", "saturation-int8"} <= set(table.skipped)
    assert all(c.problem.dims["dtype"] == "float32" for c in table.cases)
    r = check_variant(v, "ci", seed=0, db="none", failures_dir=None, shrink=False)
    assert r.status == "pass", r.reason
    assert "int32-limit" in r.directed_skipped and r.directed == len(table.cases)
    assert f"{len(r.directed_skipped)} outside the support skipped" in r.statistics


def test_directed_cases_respect_the_support_and_the_constraint():
    def small(problem, params):
        return None if problem.dims["w"] <= 16 else "w > 16"
    v = _correct("filter2d", "small", {"dtype": ("uint8", "float32"), "out_dtype": (None, "int16")},
                 params=(Param("bx", (4, 8)), Param("by", (2, 4))), constraint=small)
    table = directed_cases(v, "ci")
    assert table.cases
    for c in table.cases:
        assert outside_support(v, c.problem, c.params) is None, c.label
        assert c.problem.dims["w"] <= 16
    assert not any("wide x one" in c.label for c in table.cases)   # dropped, not failed


def test_directed_sizes_derive_from_the_launch_parameters():
    v = _correct("filter2d", "tiles", {"dtype": ("float32",), "boundary": ("zero",)},
                 params=(Param("bx", (5, 7)), Param("by", (3,))))
    cases = directed_cases(v, "ci").cases
    geo = {c.label.split("geometry ")[-1]: c for c in cases if "geometry" in c.label}
    one = geo["one x one"].problem.dims
    assert (one["h"], one["w"]) == (1, 1)
    sev = geo["several x several"]
    bx, by = sev.params["bx"], sev.params["by"]
    assert sev.problem.dims["w"] == 2 * bx + 1 and sev.problem.dims["h"] == 2 * by + 1
    edge = geo["below x above"]
    assert edge.problem.dims["w"] == edge.params["bx"] - 1 and edge.problem.dims["h"] == edge.params["by"] + 1
    wide = geo["wide x one"].problem.dims["w"]
    assert wide == 4 * 7 + 3          # relative to bx's largest value: several blocks even if coarsened


def test_directed_cases_cross_every_admitted_option_value():
    v = _correct("filter2d", "all", {})
    cases = directed_cases(v, "ci").cases
    rec = ops.get("filter2d")
    seen = {k: set() for k in rec.options}
    for c in cases:
        o = rec.complete(c.problem.options)
        for k in seen:
            seen[k].add(o[k])
    assert seen["boundary"] == set(rec.options["boundary"])
    assert seen["flip"] == {False, True}
    assert {"float32", "float64", "int"} <= seen["accumulator"]
    assert {"trunc", "nearest-even"} <= seen["rounding"] and {"saturate", "wrap"} <= seen["cast"]
    assert {0, 8} <= seen["shift"]
    dtypes = {c.problem.dims["dtype"] for c in cases if _row(c.label) == "ties"}
    assert dtypes == {"uint8", "float32", "float64"}       # ties on every dtype


def test_directed_cases_are_the_same_in_every_run():
    v = BUGS["tf32_matvec"]
    a = [(c.problem.descriptor(), c.params) for c in directed_cases(v, "ci").cases]
    b = [(c.problem.descriptor(), c.params) for c in directed_cases(v, "ci").cases]
    assert a == b and len(a) == len({d for d, _ in a})


def test_a_failing_directed_case_is_saved_as_a_reproducer(tmp_path):
    r = check_variant(BUGS["sobel_half_up"], "ci", seed=0, db="none", failures_dir=str(tmp_path))
    assert r.status == "fail" and r.failure and r.reproducer
    from refconv.repro import load_reproducer
    from refconv.problem import Problem
    rep = load_reproducer(r.reproducer)
    assert str(rep).count("ties")     # the directed case's own fills: a tie-making image
    assert Problem.parse(r.failure["descriptor"]).fills["image"].startswith("ties.")


def test_a_correct_variant_passes_every_directed_case_of_every_op():
    for op in ("filter2d", "conv2d", "sobel", "matvec", "kron"):
        v = _correct(op, "spec", {}, params=(Param("b", (2, 3)),))
        table = directed_cases(v, "ci")
        assert table.cases, op
        for c in table.cases:
            r = check_example(v, c.problem, c.params)
            assert r.status == "pass", (op, c.label, r.message)
