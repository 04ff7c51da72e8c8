"""``refconv bench`` survives bad kernels: each row runs in a worker process under ``--timeout``;
a kernel that hangs or kills its process becomes a row with that status, the rows after it are
still measured, and the JSON keeps them all (the ``faults`` test plugin, through the real CLI)."""
import json
import time

from helpers import kill_pids, processes_with_arg, refconv_cli, sleep_marker


import pytest


@pytest.fixture(scope="module")
def faults_bench(faults_env, tmp_path_factory):
    """One bench of every ``faults`` variant (crashes, a hang that leaves a child, correct ones)."""
    tmp = tmp_path_factory.mktemp("bench_faults")
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_SLEEP": marker}
    js = tmp / "bench.json"
    try:
        t0 = time.monotonic()
        p = refconv_cli("bench", "--backend", "faults", "--repeat", "2", "--peers", "none", "--baseline", "spec",
                        "--timeout", "20", "--json", str(js), env=env, cwd=tmp, timeout=600)
        took = time.monotonic() - t0
        left = processes_with_arg(marker)
    finally:
        kill_pids(processes_with_arg(marker))
    rows = {r["variant"]: r for r in json.loads(js.read_text())["rows"]} if js.exists() else {}
    return p, rows, took, left


def test_a_hanging_kernel_is_a_hang_row_within_its_timeout_and_the_rows_after_it_are_measured(faults_bench):
    p, rows, took, left = faults_bench
    assert p.returncode == 0, p.stdout + p.stderr
    hang = rows["matvec/faults/spawns_and_hangs"]
    assert hang["status"].startswith("hang: the row ran longer than 20s"), hang
    assert hang["median_s"] is None
    for c in "abcdef":                              # listed after the crashes and the hang
        ok = rows[f"matvec/faults/correct_{c}"]
        assert ok["status"] == "ok" and ok["median_s"] > 0, ok
    assert rows["matvec/spec"]["status"] == "ok"
    assert took < 400, took                         # the hang cost its timeout, not the run
    assert not left, "the hung kernel's child outlived its worker"


def test_a_kernel_that_kills_its_process_is_a_crash_row_and_the_run_goes_on(faults_bench):
    p, rows, _, _ = faults_bench
    assert rows["matvec/faults/crash_segfault"]["status"] == "crash: worker died (signal 11 SIGSEGV)"
    assert rows["matvec/faults/crash_abort"]["status"] == "crash: worker died (signal 6 SIGABRT)"
    assert rows["matvec/faults/crash_sys_exit"]["status"].startswith("crash: worker died (exit 3)")
    assert "SystemExit(3)" in rows["matvec/faults/crash_sys_exit"]["status"]
    assert "crash: worker died" in p.stdout            # the table shows it


def test_a_negative_timeout_is_a_usage_error_naming_the_option(faults_env, tmp_path):
    p = refconv_cli("bench", "--backend", "faults", "--timeout", "-1", env=faults_env, cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and "--timeout" in p.stderr, p.stdout + p.stderr
