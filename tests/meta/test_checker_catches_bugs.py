"""Proof that the checker catches bugs: every deliberately wrong variant of the installable
``refconv-buggy`` test plugin is reported by ``refconv check`` with a minimised reproducer, the
hanging one does not stall the run, and ``refconv repro`` replays a failure with its diff."""
import json

import pytest

from helpers import refconv_cli

EXPECTED = {
    "filter2d/buggy/halo_off_by_one", "filter2d/buggy/wrong_border", "filter2d/buggy/no_shift",
    "filter2d/buggy/wrap_not_saturate", "filter2d/buggy/unwritten_pixel", "kron/buggy/transposed_block",
    "matvec/buggy/drop_last_col", "matvec/buggy/hangs", "conv2d/buggy/raises",
}


@pytest.fixture(scope="module")
def buggy_run(buggy_env, tmp_path_factory):
    work = tmp_path_factory.mktemp("buggy_run")
    p = refconv_cli("check", "--backend", "buggy", "--seed", "3", "--timeout", "8", "--jobs", "2",
                    "--hang-shrink", "0", "--json", "report.json", "--junit", "report.xml", "--quiet",
                    env=buggy_env, cwd=work, timeout=900)
    return p, work, json.loads((work / "report.json").read_text())


def test_every_deliberately_wrong_variant_is_reported(buggy_run):
    p, work, report = buggy_run
    assert p.returncode == 1, p.stdout + p.stderr
    status = {r["variant"]: r["status"] for r in report["results"]}
    assert EXPECTED <= set(status), sorted(status)
    missed = {v for v in EXPECTED if status[v] not in ("fail", "error")}
    assert not missed, f"not caught: {missed}\n{p.stdout}"


def test_each_failure_has_a_minimised_reproducer_file(buggy_run):
    _, work, report = buggy_run
    for r in report["results"]:
        if r["variant"] in EXPECTED:
            assert r["reproducer"], r
            doc = json.loads((work / r["reproducer"]).read_text())
            assert doc["variant"] == r["variant"] and doc["descriptor"] and "inputs" in doc


def test_hang_is_an_error_and_does_not_stall_the_others(buggy_run):
    p, work, report = buggy_run
    hang = next(r for r in report["results"] if r["variant"] == "matvec/buggy/hangs")
    assert hang["status"] == "error" and "hang" in hang["reason"]
    assert report["seconds"] < 300


def test_hang_is_kept_as_found_with_hang_shrink_0(buggy_run):
    _, _, report = buggy_run
    hang = next(r for r in report["results"] if r["variant"] == "matvec/buggy/hangs")
    assert "shrink" not in hang["failure"] and "original_case" not in hang["failure"]


def test_hanging_case_is_shrunk_to_the_smallest_that_still_hangs(buggy_env, tmp_path):
    # matvec/buggy/hangs hangs exactly when rows > 3: the smallest hanging case has rows=4,
    # cols at its minimum 1, and zero fills
    p = refconv_cli("check", "--backend", "buggy", "--variant", "hangs", "--seed", "3", "--timeout", "3",
                    "--hang-shrink", "120", "--json", "report.json", "--quiet", env=buggy_env, cwd=tmp_path,
                    timeout=600)
    report = json.loads((tmp_path / "report.json").read_text())
    (r,) = report["results"]
    assert r["status"] == "error" and "hang" in r["reason"], p.stdout + p.stderr
    f = r["failure"]
    assert f["shrink"]["complete"] and f["shrink"]["confirmed"], f
    desc = f["descriptor"]
    assert ",rows=4,cols=1:" in desc and "m=zero.0" in desc and "v=zero.0" in desc, f
    assert f["original_case"] != f["case"] and "shrunk to" in r["reason"]
    saved = json.loads((tmp_path / r["reproducer"]).read_text())
    assert saved["descriptor"] == desc


def test_raising_variant_is_an_error_with_its_message(buggy_run):
    _, _, report = buggy_run
    r = next(r for r in report["results"] if r["variant"] == "conv2d/buggy/raises")
    assert r["status"] == "error" and "raised" in r["reason"]


def test_unwritten_pixel_is_found_by_the_poison(buggy_run):
    _, _, report = buggy_run
    r = next(r for r in report["results"] if r["variant"] == "filter2d/buggy/unwritten_pixel")
    assert r["failure"]["n_unwritten"] >= 1, r


def test_junit_report_lists_every_variant_with_failures(buggy_run):
    _, work, report = buggy_run
    xml = (work / "report.xml").read_text()
    for v in EXPECTED:
        assert f'name="{v}"' in xml
    assert "<failure" in xml and "<error" in xml


def test_repro_replays_the_minimised_failure_and_prints_the_diff(buggy_run, buggy_env):
    _, work, report = buggy_run
    r = next(r for r in report["results"] if r["variant"] == "matvec/buggy/drop_last_col")
    p = refconv_cli("repro", r["reproducer"], env=buggy_env, cwd=work, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "matvec/buggy/drop_last_col" in p.stdout and "differences" in p.stdout
