"""``refconv merge`` refuses a report it cannot merge faithfully, before anything is printed: exit 2
and one line that names the file, the entry, what was given and what is accepted, with the
command's prefix once (``refconv merge: report ...``, never ``refconv merge: merge: ...``)."""
from __future__ import annotations

import json

import pytest

from helpers import refconv_cli
from refconv.errors import UsageError
from refconv.merge import STATUSES, load_report, merge_reports


def _report(**kw) -> dict:
    doc = {"profile": "ci", "seconds": 1.0, "results": [{"variant": "m/x/a", "status": "pass", "seconds": 0.5}]}
    doc.update(kw)
    return doc


def _one(**kw) -> list:
    return [{"variant": "m/x/a", "status": "pass", "seconds": 0.5, **kw}]


BAD = {
    "status": (_report(results=_one(status="bogus")),
               r"results\[0\]: variant m/x/a: status 'bogus' not accepted; accepted: pass, fail, error, unavailable, skipped"),
    "nan_seconds": (_report(results=_one(seconds=float("nan"))), r"seconds nan not accepted; accepted: a finite number >= 0"),
    "negative_seconds": (_report(results=_one(seconds=-1)), r"seconds -1 not accepted"),
    "infinite_run_seconds": (_report(seconds=float("inf")), r"report '[^']*infinite_run_seconds.json': seconds inf not accepted"),
    "string_seconds": (_report(results=_one(seconds="1")), r"seconds '1' not accepted"),
    "nonsense_id": (_report(results=_one(variant="nonsense")),
                    r"variant 'nonsense' is not a variant id; accepted: op/backend/name"),
    "empty_id_part": (_report(results=_one(variant="m//a")), r"variant 'm//a' is not a variant id"),
    "count": (_report(results=_one(examples=-3)), r"examples -3 not accepted; accepted: a whole number >= 0"),
    "shard_string": (_report(shard="1/2"),
                     r"shard '1/2' not accepted; accepted: an object \{\"k\": K, \"n\": N, \"of\": M\}"),
    "shard_k_past_n": (_report(shard={"k": 3, "n": 2, "of": 5}), r"shard \{'k': 3, 'n': 2, 'of': 5\} not accepted"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_load_report_refuses_a_field_the_merge_cannot_use_naming_file_entry_and_accepted(tmp_path, case):
    doc, message = BAD[case]
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=message) as e:
        load_report(path)
    assert str(path) in str(e.value)


def test_load_report_accepts_what_refconv_check_writes(tmp_path):
    path = tmp_path / "ok.json"
    results = [{"variant": f"m/x/{s}", "status": s, "seconds": 0, "examples": 3, "worst_rel": float("inf")}
               for s in STATUSES]
    path.write_text(json.dumps(_report(results=results, shard={"k": 1, "n": 1, "of": 5})))
    assert [r["status"] for r in load_report(path)["results"]] == list(STATUSES)


@pytest.mark.parametrize("case", ["status", "nan_seconds", "nonsense_id", "shard_string"])
def test_merge_command_exits_2_with_one_line_and_one_prefix(tmp_path, case):
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(BAD[case][0]))
    p = refconv_cli("merge", str(path), cwd=tmp_path, timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith(f"refconv merge: report '{path}': ")
    assert p.stdout == ""


def test_merge_errors_carry_no_prefix_of_their_own():
    # the command line adds "refconv merge: "; the message must not add a second "merge: "
    a = {"results": [], "shard": {"k": 1, "n": 2, "of": 2}}
    with pytest.raises(UsageError) as e:
        merge_reports([a])
    assert not str(e.value).startswith("merge:") and "shard(s) 2/2 missing" in str(e.value)
    with pytest.raises(UsageError) as e:
        merge_reports([])
    assert not str(e.value).startswith("merge:")
