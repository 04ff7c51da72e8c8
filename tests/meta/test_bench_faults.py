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
    assert "while checking matvec/faults/spawns_and_hangs (its first run)" in hang["status"], hang   # the phase
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


@pytest.mark.parametrize("value", ["-1", "1e-9"])
def test_a_negative_or_too_short_timeout_is_a_usage_error_naming_the_option_and_the_least(faults_env, tmp_path,
                                                                                          value):
    p = refconv_cli("bench", "--backend", "faults", "--timeout", value, env=faults_env, cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and "--timeout" in p.stderr and ">= 0.1" in p.stderr, p.stdout + p.stderr


def test_a_run_stopped_mid_problem_keeps_the_rows_it_finished(faults_env, tmp_path):
    """SIGTERM while a problem's hanging row runs: the JSON already holds the rows before it (the
    report is rewritten after every row, not only after every problem)."""
    import os
    import signal
    import subprocess
    import sys
    marker = sleep_marker()
    js = tmp_path / "bench.json"
    proc = subprocess.Popen([sys.executable, "-m", "refconv", "bench", "--backend", "faults", "--repeat", "1",
                             "--peers", "none", "--baseline", "spec", "--timeout", "300", "--json", str(js)],
                            env={**faults_env, "REFCONV_FAULTS_SLEEP": marker}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not processes_with_arg(marker):   # the hanging row has begun
            assert proc.poll() is None, "bench ended before its hanging row"
            time.sleep(0.5)
        assert processes_with_arg(marker), "the hanging row never started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        kill_pids(processes_with_arg(marker))
    rows = {r["variant"]: r for r in json.loads(js.read_text())["rows"]}
    assert rows["matvec/spec"]["status"] == "ok"
    assert rows["matvec/faults/crash_segfault"]["status"].startswith("crash"), rows
    assert "matvec/faults/correct_a" not in rows          # after the hang: never measured
