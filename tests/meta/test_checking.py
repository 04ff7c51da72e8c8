"""The example checker itself: poisoned buffers reveal unwritten elements, interior writers must
leave the border alone, findings fail an example, a raising variant is an error, not a crash."""
import numpy as np

from refconv import Param, Problem, Range, Variant, findings
from refconv.checking import check_example, poison_value
from refconv.runner import check_variant

MV = Problem("matvec", {"dtype": "float32", "rows": 6, "cols": 5}, {}, {"m": "exact.1", "v": "exact.2"})
F3 = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 7, "w": 9, "kh": 3, "kw": 3},
             {"boundary": "valid", "flip": False, "accumulator": "int", "shift": 4, "cast": "wrap"},
             {"image": "random.3", "weights": "exact.4"})


def _mv(skip=None):
    def run(problem, out, **_):
        m, v = problem.inputs["m"], problem.inputs["v"]
        full = (m.astype(np.float64) @ v.astype(np.float64)).astype(np.float32)
        for i in range(out.shape[0]):
            if i != skip:
                out[i] = full[i]
        return out
    return Variant("matvec", "meta", "mv", run)


def _f3(touch_border=False):
    from refconv import specs

    def run(problem, out, **_):
        inner = specs.filter2d(problem.inputs["image"], problem.inputs["weights"], **problem.options)
        out[1:-1, 1:-1] = inner
        if touch_border:
            out[0, 0] = 7
        return out
    return Variant("filter2d", "meta", "f3", run, writes="interior")


def test_correct_variant_passes_and_exact_arithmetic_is_reported_exact():
    r = check_example(_mv(), MV, {})
    assert r.status == "pass", r.message
    assert r.exact and r.max_abs == 0


def test_unwritten_output_element_is_caught_by_the_poison():
    r = check_example(_mv(skip=4), MV, {})
    assert r.status == "fail" and r.n_unwritten == 1 and r.first_bad == (4,)
    assert "never written" in r.message


def test_poison_is_a_value_absent_from_the_expected_uint8_result():
    exp = np.arange(255, dtype=np.uint8)
    assert poison_value(np.uint8, exp) == 255
    f = poison_value(np.float32, np.zeros(3, np.float32))
    assert np.isnan(f) and np.float32(f).view(np.uint32) == 0x7FC5A5A5


def test_interior_writer_passes_when_border_untouched_and_fails_when_it_writes_the_border():
    assert check_example(_f3(), F3, {}).status == "pass"
    r = check_example(_f3(touch_border=True), F3, {})
    assert r.status == "fail" and r.n_border == 1 and "outside the declared interior" in r.message


def test_finding_reported_during_run_fails_the_example_even_with_right_values():
    inner = _mv()

    def run(problem, out, **kw):
        findings.report("shared-race", "two threads wrote s[3]", kernel="k", line=12)
        return inner.run(problem, out, **kw)

    r = check_example(Variant("matvec", "meta", "racy", run), MV, {})
    assert r.status == "fail" and r.findings[0]["class"] == "shared-race" and r.findings[0]["line"] == 12


def test_raising_variant_is_an_error_with_the_exception_text():
    def run(problem, out, **_):
        raise RuntimeError("launch failed: too many resources")

    r = check_example(Variant("matvec", "meta", "boom", run), MV, {})
    assert r.status == "error" and "too many resources" in r.message


def test_wrong_shape_is_a_failure_naming_both_shapes():
    r = check_example(Variant("matvec", "meta", "shape", lambda p, out, **_: np.zeros(3, np.float32)), MV, {})
    assert r.status == "fail" and "(3,)" in r.message and "(6,)" in r.message


def test_runner_shrinks_a_block_dependent_bug_to_a_small_case_and_saves_a_reproducer(tmp_path):
    def run(problem, out, block):
        m, v = problem.inputs["m"], problem.inputs["v"]
        cols = m.shape[1] - (m.shape[1] % block != 0)   # drops the last column unless cols % block == 0
        out[:] = (m[:, :cols].astype(np.float64) @ v[:cols].astype(np.float64)).astype(m.dtype)
        return out

    bad = Variant("matvec", "meta", "drop_last", run, supports={"dtype": ("float64",)},
                  params=(Param("block", (4, 8), 8),))
    r = check_variant(bad, "ci", seed=1, db="none", failures_dir=str(tmp_path))
    assert r.status == "fail"
    d = Problem.parse(r.failure["descriptor"]).dims
    assert d["rows"] == 1 and d["cols"] <= 3          # minimised
    assert r.reproducer and (tmp_path / r.reproducer.split("/")[-1]).exists()


def test_problem_outside_the_spec_domain_is_an_invalid_draw_not_a_variant_failure():
    import pytest
    from refconv.checking import InvalidProblem
    p = Problem("filter2d", {"dtype": "float32", "c": 0, "h": 4, "w": 4, "kh": 3, "kw": 3}, {"shift": 3}, {})
    with pytest.raises(InvalidProblem, match="shift"):
        check_example(_mv(), p, {})


def test_a_runs_plan_counts_the_directed_cases_and_the_drawn_examples_so_progress_bars_end_full():
    """``refconv check`` showed ``14/2`` for a variant with 12 directed cases and 2 examples: the
    runner now says first how many examples to expect, and the progress bar takes that total."""
    from refconv.commands.check import _progress_events
    from refconv.directed import directed_cases
    from refconv.profiles import get_profile

    def run(problem, out):
        out[:] = (problem.inputs["m"].astype(np.float64) @ problem.inputs["v"].astype(np.float64)).astype(out.dtype)
        return out

    v = Variant("matvec", "meta", "right", run, supports={"dtype": ("float64",)})
    prof = get_profile("ci", 3)
    events = []
    r = check_variant(v, prof, seed=1, db="none", failures_dir=None, on_example=lambda e, res, c: events.append((e, c)))
    assert r.status == "pass"
    n_directed = len(directed_cases(v, prof).cases)
    assert n_directed > 0 and events[0] == ("plan", n_directed + 3)
    assert sum(e == "done" for e, _ in events) == r.directed + r.examples <= n_directed + 3

    class FakeProgress:
        def __init__(self):
            self.totals, self.done, self.console = {}, {}, type("C", (), {"print": lambda *a: None})()

        def add_task(self, name, total, status):
            self.totals[name], self.done[name] = total, 0
            return name

        def update(self, task, total=None, visible=None):
            if total is not None:
                self.totals[task] = total

        def advance(self, task):
            self.done[task] += 1

    class Run:
        prof, results = get_profile("ci", 2), {}

    p = FakeProgress()
    on_event = _progress_events(Run(), p, 1)
    on_event("plan", "matvec/meta/right", (14,))
    for _ in range(14):
        on_event("start", "matvec/meta/right", ("case",))
        on_event("done", "matvec/meta/right", ("pass", 0.0))
    task = "  matvec/meta/right"
    assert p.totals[task] == 14 and p.done[task] == 14
