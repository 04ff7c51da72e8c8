"""``refconv bench`` on unusual inputs (issue 43): a short ``--timeout`` ends in rows, not a
traceback; GPU-sized problems without a GPU peer are refused unless the peers to time are named;
``--list-presets`` cites what a user has (the study, not a file of this workplace)."""
from __future__ import annotations

import re

import pytest

from helpers import refconv_cli
from refconv import peers as peers_mod
from refconv.bench import presets
from refconv.bench.command import _refuse_cpu_peers_at_gpu_sizes
from refconv.bench.options import BenchOptions
from refconv.bench.worker import RowTask
from refconv.errors import UsageError
from refconv.problem import Problem

MATVEC = Problem("matvec", {"dtype": "float32", "rows": 8, "cols": 8}, {}, {}).descriptor()


def test_a_failed_peer_listing_skips_each_peer_it_would_list_naming_why():
    # the listing of an op's peers runs in the worker: when it hangs or crashes, each peer it would
    # have listed is a skipped row that says why (was: ValueError: row kind 'peers' not accepted)
    got = RowTask("peers", "m", MATVEC, peers="auto").failed("hang: the row ran longer than 1s")
    assert got == [(p.name, "not listed: hang: the row ran longer than 1s") for p in peers_mod.all_peers()
                   if p.op == "matvec"]
    assert RowTask("peers", "m", MATVEC, peers="numpy_matvec").failed("crash: x") == [("numpy_matvec", "not listed: crash: x")]
    assert RowTask("peers", "m", MATVEC, peers="none").failed("crash: x") == []


def test_an_unknown_peer_name_is_refused_naming_the_accepted_ones():
    with pytest.raises(UsageError, match=r"--peers 'nosuch': unknown peer\(s\) \['nosuch'\]; accepted: auto, all, none"):
        peers_mod.named("matvec", "nosuch")


def _listing(**why):
    """A fake ``rows_of`` that lists the matvec peers with the given reasons (None: it can run)."""
    def rows_of(task):
        assert task.kind == "peers" and task.peers == "auto"
        return [(n, w) for n, w in why.items()]
    return rows_of


BIG = [("matvec-4096", presets.PRESETS["matvec-4096"].problem(), None, True)]
NO_GPU = _listing(cublas_mv="torch 2.13.0+cpu sees no CUDA device", numpy_matvec=None)


def test_gpu_sized_problems_without_a_gpu_peer_are_refused_under_peers_auto():
    with pytest.raises(UsageError) as e:
        _refuse_cpu_peers_at_gpu_sizes(BenchOptions(preset=("matvec-4096",)), BIG, NO_GPU)
    msg = str(e.value)
    assert msg.startswith("--preset matvec-4096: GPU-sized problems, and no GPU peer can run here "
                          "(torch 2.13.0+cpu sees no CUDA device)")
    assert "CPU peers (numpy_matvec)" in msg and "--peers all" in msg and "--peers none" in msg
    with pytest.raises(UsageError, match=r"^--scale paper: "):
        _refuse_cpu_peers_at_gpu_sizes(BenchOptions(scale="paper"), BIG, NO_GPU)


@pytest.mark.parametrize("case", ["peers_all", "peers_named", "peers_none", "small", "gpu_peer_runs"])
def test_gpu_sized_problems_run_when_the_peers_are_named_or_a_gpu_peer_runs(case):
    opts = BenchOptions(preset=("matvec-4096",), peers={"peers_all": "all", "peers_named": "numpy_matvec",
                                                         "peers_none": "none"}.get(case, "auto"))
    todo = [(n, p, o, case != "small") for n, p, o, _ in BIG]
    rows_of = _listing(cublas_mv=None, numpy_matvec=None) if case == "gpu_peer_runs" else NO_GPU
    _refuse_cpu_peers_at_gpu_sizes(opts, todo, rows_of)     # no error


def _gpu_peer_here() -> bool:
    return any(p.device == "gpu" and p.available() is None for p in peers_mod.all_peers() if p.op == "matvec")


def test_bench_preset_without_a_gpu_is_refused_in_one_line_before_any_row(tmp_path):
    if _gpu_peer_here():
        pytest.skip("a GPU peer can run here: the preset is timed, not refused")
    p = refconv_cli("bench", "--backend", "example", "--preset", "matvec-4096", "--json", "b.json",
                    cwd=tmp_path, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refconv bench: --preset matvec-4096: GPU-sized problems"), p.stderr
    assert "--peers all" in lines[0] and "Traceback" not in p.stderr
    assert not (tmp_path / "b.json").exists()     # refused before any row


@pytest.mark.slow
def test_bench_with_a_one_second_timeout_ends_in_rows_not_a_traceback(tmp_path):
    p = refconv_cli("bench", "--backend", "example", "--op", "matvec", "--timeout", "1", "--repeat", "1",
                    "--json", "b.json", cwd=tmp_path, timeout=300, env=None)
    assert "Traceback" not in p.stderr + p.stdout and p.returncode == 0, p.stderr[-3000:]
    import json
    rows = json.loads((tmp_path / "b.json").read_text())["problems"][0]["rows"]
    peers = [r for r in rows if r["kind"] == "peer"]
    assert {r["peer"] for r in peers} == {p.name for p in peers_mod.all_peers() if p.op == "matvec"}


def test_list_presets_cites_the_study_not_a_file_of_this_workplace():
    for p in presets.PRESETS.values():
        assert not re.search(r"seeds/|\.txt", p.source), p.source
        assert re.match(r"seed 00[0-4] \(", p.source), p.source
    p = refconv_cli("bench", "--list-presets", timeout=120, env={**__import__("os").environ, "COLUMNS": "400"})
    assert p.returncode == 0 and "seeds/" not in p.stdout and "seed 000 (" in p.stdout, p.stdout
