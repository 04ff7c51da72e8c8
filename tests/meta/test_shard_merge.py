"""``refconv check --shard K/N`` and ``refconv merge``: a stable split of the selected variants, and
shard reports joined into one matrix, JSON and JUnit file with the exit status of one run."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from helpers import refconv_cli
from refconv.merge import merge_reports
from refconv.shard import parse_shard, select, shard_of

IDS = [f"{op}/b{i}/v{j}" for op in ("filter2d", "matvec") for i in range(3) for j in range(7)]


def test_every_variant_is_in_exactly_one_shard():
    for n in (1, 2, 3, 7, 50):
        parts = [select(IDS, k, n, key=str) for k in range(1, n + 1)]
        assert sorted(x for p in parts for x in p) == sorted(IDS)
        assert all(select(IDS, k, n, key=str) == p for k, p in zip(range(1, n + 1), parts))  # same twice


def test_shard_of_a_variant_is_its_sha256_mod_n_in_any_process():
    # the documented rule, and the same in a process with another hash seed
    rule = {v: 1 + int.from_bytes(hashlib.sha256(v.encode()).digest()[:8], "big") % 4 for v in IDS}
    assert {v: shard_of(v, 4) for v in IDS} == rule
    code = "import json,sys; from refconv.shard import shard_of; print(json.dumps({v: shard_of(v, 4) for v in sys.argv[1:]}))"
    out = subprocess.run([sys.executable, "-c", code, *IDS], env={**os.environ, "PYTHONHASHSEED": "12345"},
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == rule


def test_adding_a_variant_moves_no_other_variant():
    before = {v: shard_of(v, 3) for v in IDS}
    more = IDS + ["kron/new/v0"]
    assert all(shard_of(v, 3) == before[v] for v in more if v in before)


@pytest.mark.parametrize("text", ["", "2", "0/2", "3/2", "1/0", "a/b", "-1/2"])
def test_bad_shard_is_refused_naming_the_option(text):
    with pytest.raises(ValueError, match=r"--shard"):
        parse_shard(text)


def _report(k, n, of, *results):
    return {"profile": "ci", "seconds": 1.0 * k, "shard": {"k": k, "n": n, "of": of},
            "results": [{"variant": v, "status": s} for v, s in results]}


def test_merge_refuses_a_missing_or_repeated_shard_or_a_variant_twice():
    a, b = _report(1, 3, 3, ("m/x/a", "pass")), _report(2, 3, 3, ("m/x/b", "pass"))
    with pytest.raises(ValueError, match=r"shard\(s\) 3/3 missing"):
        merge_reports([a, b])
    with pytest.raises(ValueError, match=r"shard\(s\) 1/3 given more than once"):
        merge_reports([a, a, b])
    c = _report(3, 3, 3, ("m/x/a", "fail"))
    with pytest.raises(ValueError, match="m/x/a is in both"):
        merge_reports([a, b, c], names=["a.json", "b.json", "c.json"])
    with pytest.raises(ValueError, match="different variant sets"):
        merge_reports([a, b, _report(3, 3, 4, ("m/x/c", "pass"))])
    merged = merge_reports([a, b, _report(3, 3, 3)])
    assert [r["variant"] for r in merged["results"]] == ["m/x/a", "m/x/b"]
    assert merged["seconds"] == 3.0 and merged["work_seconds"] == 6.0


@pytest.fixture(scope="module")
def shard_runs(faults_env, tmp_path_factory):
    # 11 variants (5 crash_*, 6 correct_*) in 2 shards; the crashes (rows > 2) are errors, found at
    # once; seeded, so that every crash variant draws such a case within its 10 examples
    work = tmp_path_factory.mktemp("shards")
    runs = [refconv_cli("check", "--backend", "faults", "--variant", "c*", "--examples", "10", "--seed", "0", "--hang-shrink", "0",
                        "--no-save", "--jobs", "2", "--quiet", "--shard", f"{k}/2", "--json", f"s{k}.json",
                        env=faults_env, cwd=work, timeout=600) for k in (1, 2)]
    return work, runs


def test_shards_split_the_selection_and_merge_into_one_run(shard_runs, faults_env):
    work, runs = shard_runs
    docs = [json.loads((work / f"s{k}.json").read_text()) for k in (1, 2)]
    for k, (p, d) in enumerate(zip(runs, docs), 1):
        assert d["shard"] == {"k": k, "n": 2, "of": 11}, p.stdout + p.stderr
        assert all(shard_of(r["variant"], 2) == k for r in d["results"])
    ids = [r["variant"] for d in docs for r in d["results"]]
    assert len(ids) == len(set(ids)) == 11
    p = refconv_cli("merge", "s1.json", "s2.json", "--json", "all.json", "--junit", "all.xml",
                    env=faults_env, cwd=work, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr  # the crashes fail the merged run, as in one run
    merged = json.loads((work / "all.json").read_text())
    assert sorted(r["variant"] for r in merged["results"]) == sorted(ids)
    xml = (work / "all.xml").read_text()
    assert 'tests="11"' in xml and 'errors="5"' in xml and xml.count("<testcase") == 11
    assert "11 variants: 5 error, 6 pass" in p.stdout


def test_merge_of_an_incomplete_set_of_shards_exits_2(shard_runs, faults_env):
    work, _ = shard_runs
    p = refconv_cli("merge", "s1.json", env=faults_env, cwd=work, timeout=300)
    assert p.returncode == 2 and "shard(s) 2/2 missing" in p.stdout + p.stderr, p.stdout + p.stderr


def test_shard_that_selects_no_variant_checks_nothing_and_exits_0(faults_env, tmp_path):
    vid = "matvec/faults/correct_a"
    empty = next(k for k in range(1, 5) if shard_of(vid, 4) != k)
    p = refconv_cli("check", "--backend", "faults", "--variant", "correct_a", "--shard", f"{empty}/4",
                    "--json", "r.json", "--quiet", env=faults_env, cwd=tmp_path, timeout=300)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert p.returncode == 0 and doc["results"] == [] and doc["shard"] == {"k": empty, "n": 4, "of": 1}, p.stdout
    assert f"shard {empty}/4: 0 of 1 selected variants" in p.stdout
