"""The worst-error column reads in units a reader can judge (issue 43): a passing row shows the
largest accepted error as a fraction of its bound, a failing one the rejected error in ULPs (exact
compare) or as a fraction of the bound; the JSON report has ``worst_of_bound`` and never holds
``inf`` or ``NaN``, whatever the values (near 1e38, near the largest float64, against a 0).  And
the line below the matrix of a variant that failed: its id whole, then its reason first, on one
line cut to a readable length (a compile error's cause before the compiler's log)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from refconv import Variant, render
from refconv.report import json_report
from refconv.runner import VariantResult, check_variant
from refconv.tolerance import acceptance


def _strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} in a JSON report")
    return json.loads(text, parse_constant=refuse)


def _matvec(m, v):
    return acceptance("matvec", {"m": np.asarray(m), "v": np.asarray(v)}, {})


def _toward(acc, share: float, side: str = "hi"):
    """``expected`` moved ``share`` of the way to the bound's ``side`` end, element by element."""
    e = acc.expected.astype(np.float64)
    end = getattr(acc.accepted, side).astype(np.float64)
    with np.errstate(all="ignore"):
        moved = (e + share * (end - e)).astype(acc.expected.dtype)
    return np.where(acc.accepted.fin & np.isfinite(acc.expected), moved, acc.expected)   # non-finite: as expected


def test_float32_values_near_1e38_read_as_a_fraction_of_the_bound():
    acc = _matvec((np.full((2, 3), 1e38) * [1, -1, 1]).astype(np.float32), np.array([1.0, 1.0, 0.5], np.float32))
    v = acc.check(_toward(acc, 0.5))
    assert v.ok and 0.4 < v.of_bound <= 0.6, v
    assert v.max_abs > 1e30 and np.isfinite(v.max_rel) and v.max_rel < 1e-6   # the raw numbers say little
    r = VariantResult("matvec/x/y", "pass", worst_abs=v.max_abs, worst_rel=v.max_rel, worst_of_bound=v.of_bound)
    assert render.worst_error(r) == f"{v.of_bound:.2g} of bound"


def test_an_error_against_an_expected_zero_or_near_the_float64_limit_stays_finite():
    # cancellation: a tiny expected value next to a bound of ~1e285
    acc = _matvec(np.array([[1e300, -1e300, 1e-300]]), np.array([1.0, 1.0, 1.0]))
    assert not acc.exact
    v = acc.check(_toward(acc, 0.25))
    assert v.ok and 0.2 < v.of_bound <= 0.3 and np.isfinite(v.max_rel) and np.isfinite(v.max_abs), v
    # the largest float64 values: their difference overflows a plain subtraction
    big = np.finfo(np.float64).max / 2
    acc = _matvec(np.array([[big, big, -big, 1e-300]]), np.array([1.0, 1.0, 1.0, 1.0]))
    for side in ("hi", "lo"):
        v = acc.check(_toward(acc, 0.9, side))
        assert np.isfinite(v.max_abs) and np.isfinite(v.max_rel) and 0 <= v.of_bound <= 1, v


def test_a_rejected_exact_element_is_counted_in_ulps():
    acc = acceptance("kron", {"a": np.ones((2, 2), np.float32), "b": np.arange(4, dtype=np.float32).reshape(2, 2)}, {})
    assert acc.exact
    got = acc.expected.copy()
    got[1, 1] = np.nextafter(np.nextafter(got[1, 1], np.float32(9)), np.float32(9))
    v = acc.check(got)
    assert not v.ok and v.ulps == 2 and v.of_bound == 0
    f = {"n_bad": v.n_bad, "max_abs": v.max_abs, "max_rel": v.max_rel, "exact": v.exact, "ulps": v.ulps,
         "of_bound": v.of_bound}
    assert render.worst_error(VariantResult("kron/x/y", "fail", failure=f)) == "2 ulp (exact)"
    ints = acceptance("kron", {"a": np.ones((1, 1), np.int32), "b": np.full((1, 1), 5, np.int32)}, {})
    assert ints.check(np.full((1, 1), 8, np.int32)).ulps == 3


def test_a_rejected_bounded_element_reads_as_more_than_the_bound():
    acc = _matvec(np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32), np.ones(9, np.float32))
    v = acc.check(_toward(acc, 3.0))
    assert not v.ok and 2.5 < v.of_bound < 3.5 and v.ulps == 0
    f = {"n_bad": v.n_bad, "exact": False, "ulps": v.ulps, "of_bound": v.of_bound, "max_abs": v.max_abs}
    assert render.worst_error(VariantResult("matvec/x/y", "fail", failure=f)).endswith(" of bound")


def test_passing_row_cells_and_reports_without_the_fraction():
    assert render.worst_error(VariantResult("m/x/y", "pass", worst_abs=0.0, worst_of_bound=0.0)) == "0 (exact)"
    assert render.worst_error(VariantResult("m/x/y", "pass", worst_abs=2e-7, worst_of_bound=0.31)) == "0.31 of bound"
    # a report written before worst_of_bound (merge of older shards): the old absolute / relative cell
    assert render.worst_error(VariantResult("m/x/y", "pass", worst_abs=2.03e31, worst_rel=1.5e-7)) == "1.5e-07 rel"
    assert render.worst_error(VariantResult("m/x/y", "pass", worst_abs=1.0, worst_of_bound="x")) == "1"


def _half_the_bound():
    """A matvec variant whose every result lies half-way between the spec's value and the upper end
    of the accepted interval: correct, never bit-exact."""
    def run(problem, out, **_):
        acc = acceptance("matvec", dict(problem.inputs), {})
        out[...] = _toward(acc, 0.5)
    return Variant("matvec", "meta", "half_bound", run, supports={"dtype": ("float32",)})


def test_a_run_records_worst_of_bound_and_its_json_is_strict():
    r = check_variant(_half_the_bound(), "ci", seed=3, db="none", failures_dir=None)
    assert r.status == "pass", r.reason
    assert 0.3 < r.worst_of_bound <= 1, r.worst_of_bound
    assert "of the bound" in r.statistics
    assert render.worst_error(r).endswith(" of bound")
    doc = _strict_json(json_report("ci", 1.0, {}, [r]))
    assert doc["results"][0]["worst_of_bound"] == pytest.approx(r.worst_of_bound)


# ----------------------------------------------------------------------------- the reason line

COMPILE_ERROR = ("preflight: [compile-error] ptxas: uses 49156 bytes shared, limit 49152 -- kernel "
                 "tiled_halo_kernel does not compile for sm_90 with params {'bx': 32, 'by': 32}: "
                 + "\n".join(f"ptxas info : Function properties for tiled_halo_kernel(array(float32, 2d, C), "
                             f"array(float32, 2d, C), int64, int64, line {i})" for i in range(60)))


def test_a_compile_error_reason_is_printed_first_on_one_line_and_the_id_whole():
    import io

    from rich.console import Console
    vid = "filter2d/numba_cuda/SM_CF_coarsened_vectorised_store_with_halo"
    r = VariantResult(vid, "fail", reason=COMPILE_ERROR, failure={"findings": [{"class": "compile-error"}]})
    for width in (80, 200):
        out = io.StringIO()
        render.print_matrix(Console(file=out, width=width, highlight=False, color_system=None), [r], 1.0)
        lines = out.getvalue().splitlines()
        assert any(f"│ {vid} " in ln for ln in lines)                  # the id whole in the matrix
        line = next(ln for ln in lines if ln.startswith(f"fail {vid} — "))
        assert line.startswith(f"fail {vid} — preflight: [compile-error] ptxas: uses 49156 bytes shared, limit 49152")
        assert len(line) < len(vid) + render.REASON_LIMIT + 120 and "the --json report has the whole reason" in line
    live = render.result_line(r)
    assert vid in live and "ptxas: uses 49156 bytes shared" in live and "\n" not in live
    assert render.reason_text("short\n  reason") == "short reason"
