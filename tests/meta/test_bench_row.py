"""Bench rows as :class:`refconv.bench.Row` (explicit fields, the id derived) with the JSON schema
bench reports have always had, and the typed options the command line builds once."""
import dataclasses
import glob
import json
from pathlib import Path

import pytest

from refconv import cli
from refconv.bench import BenchOptions, ReportOptions, Row
from refconv.bench.report import merge
from refconv.variant_id import VariantId

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted(p for p in glob.glob(str(ROOT / "lab/runs/**/*.json"), recursive=True)
                 if "problems" in json.loads(Path(p).read_text()))


def test_the_stored_bench_reports_are_found():
    assert len(REPORTS) >= 5 and any(Path(p).name == "kron_all.json" for p in REPORTS)  # a merged one too


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: Path(p).relative_to(ROOT / "lab/runs").as_posix())
def test_every_row_of_a_stored_report_reads_into_a_row_and_writes_back_the_same_json(path):
    rep = json.loads(Path(path).read_text())
    for res in rep["problems"]:
        for d in res["rows"]:
            row = Row.from_json(d, res["op"])
            assert row.to_json() == d
            assert row.op == res["op"] and row.kind == d["kind"]
            if row.kind == "variant":
                assert row.variant_id == VariantId.parse(d["variant"]) and (row.backend, row.name) != (None, None)


def test_a_row_names_what_it_measured_by_fields_and_derives_its_id():
    assert Row("spec", "kron", "ok").id == "kron/spec"
    assert Row("peer", "kron", "ok", name="torch_kron").id == "kron/peer/torch_kron"
    v = Row.of_variant("kron/numba_cuda/tiled", "ok")
    assert (v.op, v.backend, v.name, v.id) == ("kron", "numba_cuda", "tiled", "kron/numba_cuda/tiled")
    k, e = {"median": 1.0, "q1": 0.5, "q3": 2.0, "min": 0.1, "max": 3.0, "n": 5}, {"median": 9.0}
    assert Row("spec", "kron", "ok", kernel_s=k, e2e_s=e).stat is k and Row("spec", "kron", "ok", e2e_s=e).stat is e
    with pytest.raises(ValueError, match="only variant rows have a variant id"):
        Row("spec", "kron", "ok").variant_id
    with pytest.raises(ValueError, match=r"row kind 'kernel' not accepted; accepted: spec, variant, peer"):
        Row("kernel", "kron", "ok")
    with pytest.raises(ValueError, match="needs the peer's name"):
        Row("peer", "kron", "ok")


def test_a_stored_row_of_another_op_or_with_a_bad_id_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"bench row 'matvec/spec' \(spec\) does not belong to op 'kron'"):
        Row.from_json({"kind": "spec", "variant": "matvec/spec", "status": "ok", "median_s": None}, "kron")
    with pytest.raises(ValueError, match=r"variant id 'kron/tiled' not accepted"):
        Row.from_json({"kind": "variant", "variant": "kron/tiled", "status": "ok", "median_s": None}, "kron")


def test_keys_a_newer_bench_wrote_survive_a_round_trip():
    d = {"kind": "variant", "variant": "kron/x/v", "status": "ok", "median_s": 1.0, "speedup": None, "tf32": True}
    row = Row.from_json(d, "kron")
    assert row.extra == {"tf32": True} and row.to_json() == d


def test_bench_report_merges_a_stored_report_into_the_same_rows(tmp_path):
    path = next(p for p in REPORTS if Path(p).name == "bench_h100_A.json")
    out = tmp_path / "merged.json"
    assert cli.main(["bench-report", path, "--json", str(out)]) == 0
    old, new = json.loads(Path(path).read_text()), json.loads(out.read_text())
    assert [r["problem"] for r in new["rows"]] == [r["problem"] for r in old["rows"]]
    for a, b in zip(old["rows"], new["rows"]):
        assert b == {**a, "run": 0}


def test_merge_keeps_the_measured_row_of_two_stored_runs_by_id():
    path = next(p for p in REPORTS if Path(p).name == "bench_h100_A.json")
    rep = json.loads(Path(path).read_text())
    res = rep["problems"][0]
    timed = next(d for d in res["rows"] if d.get("median_s"))
    failed = {k: timed[k] for k in ("kind", "variant", "peer", "library") if k in timed}
    first = {**rep, "problems": [{**res, "rows": [{**failed, "status": "error: out of memory", "median_s": None}]}]}
    got = merge([first, rep])
    row = next(r for r in got["problems"][0]["rows"] if r.id == timed["variant"])
    assert row.run == 1 and row.median_s == timed["median_s"]


def test_the_bench_options_are_exactly_the_bench_command_line_less_the_session_selection():
    ap = cli.build_parser()
    bench = set(vars(ap.parse_args(["bench"]))) - {"cmd"}
    session = set(vars(ap.parse_args(["list"]))) - {"cmd"}
    assert {f.name for f in dataclasses.fields(BenchOptions)} == bench - session
    report = set(vars(ap.parse_args(["bench-report", "x.json"]))) - {"cmd"}
    assert {f.name for f in dataclasses.fields(ReportOptions)} == report


@pytest.mark.parametrize("field, value, says", [
    ("repeat", 0, "--repeat must be >= 1, got 0"),
    ("budget", 0.0, "--budget must be a number of seconds > 0, got 0.0"),
    ("copy_bytes", 0, "--copy-bytes must be >= 1, got 0"),
    ("flush_bytes", -1, r"--flush-bytes must be >= 0 \(0: no flush\), got -1"),
    ("timeout", -1.0, r"--timeout must be 0 \(rows in this process, no limit\) or a number of seconds >= 0.1 .* got -1.0"),
    ("timeout", 1e-9, r"--timeout must be 0 .* or a number of seconds >= 0.1 .* got 1e-09"),
])
def test_bench_options_out_of_range_are_refused_naming_the_option(field, value, says):
    with pytest.raises(ValueError, match=says):
        BenchOptions(**{field: value})
    assert cli.main(["bench", f"--{field.replace('_', '-')}", str(value)]) == 2


def test_bench_options_are_frozen_and_give_the_rows_their_part():
    opts = BenchOptions(preset=["a", "b"], repeat=3, budget=2.0, flush_bytes=5, copy_bytes=7)
    assert opts.preset == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.repeat = 4
    r = opts.rows()
    assert (r.repeat, r.flush_bytes, r.budget, r.copy_bytes) == (3, 5, 2.0, 7)
