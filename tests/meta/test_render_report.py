"""The result matrix, the report files and what a run keeps when saving fails."""
import io
import os

import numpy as np
import pytest
from rich.console import Console

from refconv import Variant, render, report
from refconv.runner import VariantResult, check_variant

LONG_PATH = ".refconv/failures/" + "filter2d__numba_cuda__SM_CF_coarsened_vectorised_store-" + "0123456789abcdef" * 3 + ".json"


def _fail(vid="filter2d/numba_cuda/SM_CF_coarsened_vectorised_store_with_halo"):
    return VariantResult(vid, "fail", examples=7, seconds=1.25, reason="3 of 30 elements not accepted (exact)",
                         failure={"case": "filter2d:dtype=uint8,c=0,h=5,w=6,kh=3,kw=3::image=zero.0 @ bx=8",
                                  "n_bad": 3, "max_abs": 2.03e31, "max_rel": 1.5e-7},
                         reproducer=LONG_PATH)


def _render(results, width=80):
    out = io.StringIO()
    render.print_matrix(Console(file=out, width=width, highlight=False, color_system=None), results, 3.0, asked=25)
    return out.getvalue()


def test_matrix_fits_80_columns_and_prints_the_reproducer_path_whole_on_its_own_line():
    text = _render([_fail(), VariantResult("matvec/example/numpy_rows", "pass", examples=25, worst_abs=1e-7,
                                           worst_rel=1e-7, seconds=0.5)])
    table = text[:text.index("└")]
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert any(line.strip() == f"repro: refconv repro {LONG_PATH}" for line in text.splitlines()), text


def test_every_variant_id_stays_whole_on_one_line_at_80_columns():
    from refconv import registry
    ids = [v.id for v in registry.variants()] + [_fail().variant]
    assert len(ids) > 100
    statuses = ("pass", "fail", "error", "unavailable")
    rs = [VariantResult(vid, statuses[i % 4], examples=25, shrink_examples=40 * (i % 2), seconds=123.4,
                        worst_abs=1e-7, worst_rel=1e-7, failure={"n_bad": 3, "max_abs": 2.5, "exact": True})
          for i, vid in enumerate(ids)]
    text = _render(rs)
    table = text[:text.index("┘") + 1]
    assert all(len(line) <= 80 for line in table.splitlines()), table
    rows = [line for line in table.splitlines() if line.startswith("│")]
    for vid in ids:
        assert any(f"│ {vid} " in line for line in rows), vid
    assert "left out" in text                       # the long id pushed columns out, and it says so
    wide = _render(rs, width=200)
    assert "left out" not in wide and "123.4s" in wide


@pytest.mark.slow   # a refconv subprocess
def test_list_at_80_columns_keeps_op_backend_and_variant_names_whole(tmp_path):
    from helpers import refconv_cli
    from refconv import registry
    p = refconv_cli("list", env={**os.environ, "COLUMNS": "80"})
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if line.startswith("│")]
    assert all(len(line) <= 80 for line in rows)
    for v in registry.variants():
        assert any(line.replace(" ", "").startswith(f"│{v.op}│{v.backend}│{v.name}│") for line in rows), v.id
    assert "numba_c…" not in p.stdout


def test_worst_error_says_what_the_acceptance_used():
    # a pass whose worst difference was against an expected 0: the relative error means nothing
    ok = VariantResult("matvec/b/v", "pass", worst_abs=1.5, worst_rel=1.5 / 2.2250738585072014e-308)
    assert render.worst_error(ok) == "1.5"
    # a failure whose bad elements are NaN / inf: no finite difference, not "0 (exact)"
    nan = VariantResult("matvec/b/v", "fail", failure={"n_bad": 4, "max_abs": 0.0, "exact": False})
    assert render.worst_error(nan) == "4 non-finite (bound)"
    exact = VariantResult("kron/b/v", "fail", failure={"n_bad": 1, "max_abs": 2.0, "max_rel": 0.5, "exact": True})
    assert render.worst_error(exact) == "2 (exact)"
    unwritten = VariantResult("kron/b/v", "fail", failure={"n_bad": 0, "n_unwritten": 3, "exact": True})
    assert render.worst_error(unwritten) == "3 unwritten"
    assert render.worst_error(VariantResult("kron/b/v", "fail", failure={"findings": [{"class": "race"}]})) == "findings"


def test_reports_follow_the_umask_not_the_0600_of_a_temporary_file(tmp_path):
    old = os.umask(0o022)
    try:
        report.atomic_write(str(tmp_path / "r.json"), "{}")
        report.write_junit(str(tmp_path / "r.xml"), [], 1.0)
        os.umask(0o027)
        report.atomic_write(str(tmp_path / "s.json"), "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.xml").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o640


def test_worst_error_is_relative_where_the_absolute_difference_is_meaningless():
    assert render.fmt_err(2.03e31, 1.5e-7) == "1.5e-07 rel"
    assert render.fmt_err(3.0, 0.5) == "3"            # integer units: absolute
    assert render.fmt_err(2.5e-7, 1e-7) == "2.5e-07"  # small: absolute
    assert render.fmt_err(0.0, 0.0) == "0 (exact)"
    assert "1.5e-07 rel" in _render([_fail()], width=120)


def test_markup_in_ids_reasons_cases_and_paths_is_printed_literally():
    r = _fail("kron/x[/b]/smem[ty][tx]")
    r.reason = 'raised IndexError: tile[i] read past tile[/n] bound'
    r.reproducer = "fails/[red]x.json"
    text = _render([r], width=200)
    for s in ("kron/x[/b]/smem[ty][tx]", "tile[i] read past tile[/n] bound", "fails/[red]x.json"):
        assert s in text
    assert "tile[/n]" in render.result_line(r) or "tile\\[/n]" in render.result_line(r)
    out = io.StringIO()
    Console(file=out, width=200).print(render.result_line(r))
    assert "tile[i] read past tile[/n] bound" in out.getvalue()


def _later_rows_wrong():
    def run(problem, out, **_):
        m, v = problem.inputs["m"], problem.inputs["v"]
        out[...] = (m.astype(np.float64) @ v.astype(np.float64)).astype(out.dtype)
        if out.shape[0] > 3:
            out[3:] += 1
        return out
    return Variant("matvec", "meta", "rows_wrong", run, supports={"dtype": ("float64",)})


def test_examples_never_exceed_what_was_asked_shrinking_is_counted_apart():
    r = check_variant(_later_rows_wrong(), "ci", seed=1, db="none", failures_dir=None)
    assert r.status == "fail"
    assert r.examples <= 25 and r.shrink_examples > 0
    assert render.examples(r, 25) == f"{r.examples} +{r.shrink_examples} shrink"


def test_an_unwritable_failures_dir_keeps_the_failure_and_its_minimised_case(tmp_path):
    (tmp_path / "afile").write_text("x")
    r = check_variant(_later_rows_wrong(), "ci", seed=1, db="none", failures_dir=str(tmp_path / "afile" / "sub"))
    assert r.status == "fail" and r.failure and r.failure["descriptor"].startswith("matvec:")
    assert r.reproducer is None and "afile" in r.reproducer_error
    assert "reproducer not saved" in _render([r], width=200)


def test_reports_are_written_atomically_an_interrupted_write_keeps_the_old_report(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    report.atomic_write(str(path), "old")

    def boom(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        report.atomic_write(str(path), "new and much longer")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["r.json"]


def test_output_path_checks_name_the_option_and_what_is_accepted(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match=r"--json .*is a directory; accepted: a file path"):
        report.check_output_file("--json", str(tmp_path))
    with pytest.raises(ValueError, match=r"--junit .*does not exist"):
        report.check_output_file("--junit", str(tmp_path / "no" / "r.xml"))
    with pytest.raises(ValueError, match=r"--failures-dir .*is a file"):
        report.check_output_dir("--failures-dir", str(tmp_path / "f" / "sub"))
    report.check_output_dir("--failures-dir", str(tmp_path / "new" / "deeper"))   # may be created later
    assert not (tmp_path / "new").exists()


def test_jobs_are_capped_at_the_variants_to_check():
    from refconv.session import worker_count
    assert worker_count(16, 3) == 3
    assert worker_count(0, 1) == 1
    assert worker_count(2, 40) == 2
    assert worker_count(0, 0) == 1


def test_a_hang_whose_reproducer_cannot_be_saved_says_why_instead_of_swallowing_it(tmp_path):
    from refconv import Problem
    from refconv.repro import save_hang_reproducers
    (tmp_path / "afile").write_text("x")
    from refconv.case import Case
    case = Case(Problem("matvec", {"dtype": "float32", "rows": 2, "cols": 3}, {}, {"m": "one.0", "v": "one.0"}),
                {"row_block": 7})
    r = VariantResult("matvec/example/numpy_rows", "error", reason="hang: example ran longer than 1s (killed)",
                      failure={"case": str(case), "descriptor": case.descriptor})
    save_hang_reproducers({r.variant: r}, str(tmp_path / "afile" / "sub"), "ci")
    assert r.status == "error" and r.reproducer is None and "afile" in r.reproducer_error
    ok = VariantResult("matvec/example/numpy_rows", "error", reason=r.reason, failure=dict(r.failure))
    save_hang_reproducers({ok.variant: ok}, str(tmp_path / "fails"), "ci")
    assert ok.reproducer and os.path.exists(ok.reproducer)
