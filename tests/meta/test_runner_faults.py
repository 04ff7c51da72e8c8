"""The runner under faults (issue 16): a worker that crashes is reported at once as a crash, shrunk
in fresh workers and saved as a reproducer; processes started by a hung variant die with its
worker; Ctrl-C stops ``refconv check`` in one line with status 130; worker start-up is not counted
against the per-example limit; ``refconv repro`` runs the case in a worker under ``--timeout`` and
validates the file; a ``--seed`` run saves its failures to the example database."""
from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from helpers import refconv_cli
from helpers import kill_pids, processes_with_arg, sleep_marker
from refconv.variant_id import VariantId

CRASHES = {  # variant -> the start of its reason
    "matvec/faults/crash_segfault": "crash: worker died (signal 11 SIGSEGV)",
    "matvec/faults/crash_exit": "crash: worker died (exit 3)",
    "matvec/faults/crash_abort": "crash: worker died (signal 6 SIGABRT)",
    "matvec/faults/crash_sys_exit": "crash: worker died (exit 3); the variant raised SystemExit(3)",
    "matvec/faults/crash_keyboard_interrupt": "crash: worker died (exit 130); the variant raised KeyboardInterrupt",
}
TIMEOUT = 120  # the per-example limit of the crash run: a crash must be reported long before it


@pytest.fixture(scope="module")
def crash_run(faults_env, tmp_path_factory):
    work = tmp_path_factory.mktemp("crash_run")
    p = refconv_cli("check", "--backend", "faults", "--variant", "crash_*", "--seed", "1", "--examples", "5",
                    "--timeout", str(TIMEOUT), "--hang-shrink", "120", "--jobs", "2", "--json", "report.json",
                    "--junit", "report.xml", "--quiet", env=faults_env, cwd=work, timeout=900)
    report = json.loads((work / "report.json").read_text())
    return p, work, {r["variant"]: r for r in report["results"]}


def test_worker_crash_is_reported_at_once_as_a_crash_with_its_signal_or_exit_status(crash_run):
    p, work, results = crash_run
    assert p.returncode == 1, p.stdout + p.stderr
    assert set(results) == set(CRASHES)
    for vid, reason in CRASHES.items():
        r = results[vid]
        assert r["status"] == "error" and r["reason"].startswith(reason), (vid, r["reason"])
        assert "hang" not in r["reason"], r["reason"]
        assert r["failure"]["exitcode"] == {"crash_segfault": -11, "crash_abort": -6,
                                            "crash_keyboard_interrupt": 130}.get(VariantId.parse(vid).name, 3)
        assert r["seconds"] < TIMEOUT / 2, (vid, r["seconds"])  # not after the time limit
    assert "Traceback" not in p.stdout + p.stderr and "@seed" not in p.stdout + p.stderr, p.stdout + p.stderr


def test_crashing_case_is_shrunk_in_fresh_workers_to_the_smallest_that_crashes(crash_run):
    # every crash_* variant crashes exactly when rows > 2: the smallest crashing case has rows=3,
    # cols at its minimum 1, and zero fills
    _, work, results = crash_run
    for vid in CRASHES:
        f = results[vid]["failure"]
        desc = f["descriptor"]
        assert ",rows=3,cols=1:" in desc and "m=zero.0" in desc and "v=zero.0" in desc, (vid, f)
        saved = json.loads((work / results[vid]["reproducer"]).read_text())
        assert saved["descriptor"] == desc and saved["variant"] == vid


def test_junit_report_carries_the_crash_as_an_error(crash_run):
    _, work, _ = crash_run
    xml = (work / "report.xml").read_text()
    for vid, reason in CRASHES.items():
        head = xml[xml.index(f'name="{vid}"'):]
        assert head.index("<error message=\"" + reason) < head.index("</testcase>"), vid


def test_repro_of_a_crash_reproducer_reports_the_crash_and_returns(crash_run, faults_env):
    _, work, results = crash_run
    r = results["matvec/faults/crash_segfault"]
    p = refconv_cli("repro", r["reproducer"], env=faults_env, cwd=work, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "now: error crash: worker died (signal 11 SIGSEGV)" in p.stdout, p.stdout


def test_processes_started_by_a_hung_variant_die_with_its_worker(faults_env, tmp_path):
    # the hang is found by the check's worker, then the shrink's workers hang on smaller cases too;
    # output goes to a file: a surviving child holding a pipe would make the wait itself hang
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_SLEEP": marker}
    try:
        with open(tmp_path / "out.txt", "w") as out:
            p = subprocess.run([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant",
                                "spawns_and_hangs", "--seed", "1", "--examples", "5", "--timeout", "8",
                                "--hang-shrink", "5", "--json", "report.json", "--quiet"], env=env, cwd=tmp_path,
                               stdout=out, stderr=subprocess.STDOUT, timeout=600)
        (r,) = json.loads((tmp_path / "report.json").read_text())["results"]
        assert r["reason"].startswith("hang: example ran longer than 8s"), (tmp_path / "out.txt").read_text()
        assert ",rows=1," not in r["failure"]["original_case"] and r["failure"]["shrink"]["attempts"] >= 1, r
        survivors = processes_with_arg(marker)
        assert not survivors, f"processes started by the hung variant survived: {survivors}"
    finally:
        kill_pids(processes_with_arg(marker))


@pytest.mark.parametrize("to", ["refconv", "its process group"])
def test_ctrl_c_stops_check_in_one_line_with_status_130_and_kills_the_workers(faults_env, tmp_path, to):
    # "its process group" is what a terminal's Ctrl-C does; the variant hangs in a worker with a child
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_SLEEP": marker}
    p = subprocess.Popen([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant",
                          "spawns_and_hangs", "--timeout", "300", "--quiet"], env=env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not processes_with_arg(marker) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        assert processes_with_arg(marker), "the variant never started"
        if to == "refconv":
            p.send_signal(signal.SIGINT)
        else:
            os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, out + err
        assert err.strip().splitlines()[-1] == "refconv: interrupted", err
        assert "Traceback" not in out + err and "@seed" not in out + err, out + err
        time.sleep(0.5)
        assert not processes_with_arg(marker), "a worker's process survived the interrupt"
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        kill_pids(processes_with_arg(marker))


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` in the parent tree (the workers, the resource tracker, what
    a variant started), read from /proc."""
    parent = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat") as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_kills_every_process_of_the_run_and_writes_the_reports_of_what_finished(faults_env, tmp_path):
    # one worker hangs with a child (spawns_and_hangs), the other finishes the correct_* variants; then
    # SIGTERM (kill, docker stop, a CI cancel) goes to refconv alone, as docker stop sends it
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_SLEEP": marker}
    out_file = tmp_path / "out.txt"
    with open(out_file, "w") as out:
        p = subprocess.Popen([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant",
                              "[cs][op][ra]*", "--examples", "3", "--timeout", "300", "--jobs", "2", "--quiet",
                              "--json", "report.json", "--junit", "report.xml"], env=env, cwd=tmp_path,
                             stdout=out, stderr=subprocess.PIPE, text=True, start_new_session=True)
    tree = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and p.poll() is None and not (
                processes_with_arg(marker) and out_file.read_text().count("correct_") >= 6):
            time.sleep(0.2)
        assert processes_with_arg(marker), "the hanging variant never started: " + out_file.read_text()
        tree = _descendants(p.pid)
        assert len(tree) >= 3, tree   # two workers, the resource tracker, the variant's sleep
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=60)[1]
        assert p.returncode == 143, out_file.read_text() + err
        assert err.strip().splitlines()[-1] == "refconv: terminated", err
        assert "Traceback" not in out_file.read_text() + err, out_file.read_text() + err
        time.sleep(5)
        assert not [pid for pid in tree if _alive(pid)], f"processes of the run survived SIGTERM: {tree}"
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["interrupted"] == "SIGTERM"
        by = {r["variant"]: r for r in report["results"]}
        assert {by[f"matvec/faults/correct_{c}"]["status"] for c in "abcdef"} == {"pass"}, by
        hung = by["matvec/faults/spawns_and_hangs"]
        assert hung["status"] == "skipped" and hung["reason"] == "not finished: the run was interrupted (SIGTERM)"
        junit = (tmp_path / "report.xml").read_text()
        assert 'tests="7"' in junit and 'skipped="1"' in junit, junit
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        kill_pids([pid for pid in tree if _alive(pid)] + processes_with_arg(marker))


def test_a_worker_dies_with_a_parent_killed_by_sigkill(faults_env, tmp_path):
    # SIGKILL cannot be caught: the workers ask Linux to kill them when their parent dies
    # (PR_SET_PDEATHSIG), and the resource tracker ends when nothing holds its pipe any more
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_SLEEP": marker}
    p = subprocess.Popen([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant",
                          "spawns_and_hangs", "--timeout", "300", "--quiet"], env=env, cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    tree = []
    try:
        deadline = time.monotonic() + 300
        while not processes_with_arg(marker) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        assert processes_with_arg(marker), "the variant never started"
        tree = [pid for pid in _descendants(p.pid) if pid not in processes_with_arg(marker)]
        assert len(tree) >= 2, tree   # the worker and the resource tracker
        p.kill()
        p.wait()
        time.sleep(5)
        assert not [pid for pid in tree if _alive(pid)], f"processes of the run survived its SIGKILL: {tree}"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        kill_pids([pid for pid in tree if _alive(pid)] + processes_with_arg(marker))


def _children(pid: int, needle: bytes) -> list[int]:
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/status") as f:
                ppid = int(next(line for line in f if line.startswith("PPid:")).split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, StopIteration):
            continue
        if ppid == pid and needle in cmd:
            out.append(int(d))
    return out


def test_ctrl_c_while_a_worker_starts_reaches_only_refconv(faults_env, tmp_path):
    # a sitecustomize makes every worker spend 10 s in its interpreter start-up, before it can leave
    # the terminal's process group; a Ctrl-C to the group then must not reach it
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import time\nif b'spawn_main' in open('/proc/self/cmdline', 'rb').read():\n    time.sleep(10)\n")
    env = {**faults_env, "PYTHONPATH": os.pathsep.join([str(site), faults_env["PYTHONPATH"]])}
    p = subprocess.Popen([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant", "correct_a",
                          "--examples", "2", "--quiet"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not _children(p.pid, b"spawn_main") and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
        (worker,) = _children(p.pid, b"spawn_main")
        time.sleep(1)
        assert os.getpgid(worker) == p.pid  # still starting: in refconv's process group
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, out + err
        assert "KeyboardInterrupt" not in out + err and "Traceback" not in out + err, err
        assert err.strip() == "refconv: interrupted", err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_worker_start_up_is_not_counted_against_the_example_time_limit(faults_env, tmp_path):
    # the plugin sleeps 4 s when imported (as a heavy GPU runtime might): in the worker that is start-up,
    # and a 2 s per-example limit must not call it a hang
    env = {**faults_env, "REFCONV_FAULTS_IMPORT_DELAY": "4"}
    p = refconv_cli("check", "--backend", "faults", "--variant", "correct_a", "--examples", "3", "--timeout", "2",
                    "--hang-shrink", "0", "--json", "report.json", "--quiet", env=env, cwd=tmp_path, timeout=600)
    (r,) = json.loads((tmp_path / "report.json").read_text())["results"]
    assert p.returncode == 0 and r["status"] == "pass", p.stdout + p.stderr


def test_hang_shrink_budget_does_not_count_the_start_up_of_its_workers(faults_env, tmp_path):
    # every import of the plugin sleeps 5 s (a slow start-up, as on a loaded machine); each hanging
    # candidate needs a fresh worker.  The variant sleeps, so a candidate is a hang once blocked for
    # its 2 s limit past the limit (refconv.procs.WALL_BACKSTOP = 1): about 4 s.  The hangs need
    # about 16-20 s of the 30 s budget; with the start-ups counted (5 × 5 s) the budget would run out
    # before the smallest case is reached.
    marker = sleep_marker()
    env = {**faults_env, "REFCONV_FAULTS_IMPORT_DELAY": "5", "REFCONV_FAULTS_SLEEP": marker}
    try:
        with open(tmp_path / "out.txt", "w") as out:
            subprocess.run([sys.executable, "-m", "refconv", "check", "--backend", "faults", "--variant",
                            "spawns_and_hangs", "--seed", "1", "--examples", "5", "--timeout", "2",
                            "--hang-shrink", "30", "--json", "report.json", "--quiet"], env=env, cwd=tmp_path,
                           stdout=out, stderr=subprocess.STDOUT, timeout=600)
        (r,) = json.loads((tmp_path / "report.json").read_text())["results"]
        f = r["failure"]
        assert f["shrink"]["complete"] and f["shrink"]["startup_seconds"] >= 5, (f, (tmp_path / "out.txt").read_text())
        assert ",rows=2,cols=1:" in f["descriptor"] and "m=zero.0,v=zero.0" in f["descriptor"], f
    finally:
        kill_pids(processes_with_arg(marker))


# ----------------------------------------------------------------------------- refconv repro

def _write_reproducer(path, variant_id, desc, params=None, **override):
    from refconv.problem import Problem
    from refconv.repro import FORMAT, _enc
    from refconv.case import Case
    p = Problem.parse(desc)
    doc = {"format": FORMAT, "variant": variant_id, "case": str(Case(p, params or {})), "descriptor": desc,
           "params": params or {}, "status": "error", "message": "", "findings": [],
           "inputs": {k: _enc(v) for k, v in p.inputs.items()}}
    doc.update(override)
    path.write_text(json.dumps(doc))
    return path


def test_repro_of_a_hanging_case_returns_as_a_hang_after_its_timeout(faults_env, tmp_path):
    marker = sleep_marker()
    f = _write_reproducer(tmp_path / "hang.json", "matvec/faults/spawns_and_hangs",
                          "matvec:dtype=float64,rows=3,cols=1::m=zero.0,v=zero.0")
    try:
        t0 = time.monotonic()
        p = refconv_cli("repro", str(f), "--timeout", "2", env={**faults_env, "REFCONV_FAULTS_SLEEP": marker},
                        cwd=tmp_path, timeout=300)  # output piped
        assert p.returncode == 1, p.stdout + p.stderr
        assert "now: error hang: example ran longer than 2s" in p.stdout and "matvec/faults/spawns_and_hangs" in p.stdout
        assert time.monotonic() - t0 < 120
        assert not processes_with_arg(marker)
    finally:
        kill_pids(processes_with_arg(marker))


MATVEC = "matvec:dtype=float64,rows=3,cols=2::m=zero.0,v=zero.0"


@pytest.mark.parametrize("content, says", [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "a JSON list, expected an object"),
    ('{"format": "refconv-reproducer/1", "variant": "matvec/faults/correct_a"}',
     "missing key(s) 'case', 'descriptor', 'params', 'inputs'"),
])
def test_repro_file_that_is_not_a_reproducer_is_named_in_one_line(tmp_path, content, says):
    from refconv.repro import load_reproducer
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(ValueError, match="bad.json") as e:
        load_reproducer(f)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_repro_inputs_whose_shape_contradicts_the_case_line_are_refused(tmp_path):
    from refconv.repro import _enc, load_reproducer
    f = _write_reproducer(tmp_path / "r.json", "matvec/faults/correct_a", MATVEC,
                          inputs={"m": _enc(np.zeros((2, 3))), "v": _enc(np.zeros(2))})
    with pytest.raises(ValueError, match=r"input 'm' has shape \[2, 3\]; the case line .* needs \[3, 2\]"):
        load_reproducer(f)


def test_repro_case_line_that_contradicts_the_descriptor_is_refused(tmp_path):
    from refconv.repro import load_reproducer
    f = _write_reproducer(tmp_path / "r.json", "matvec/faults/correct_a", MATVEC,
                          case="matvec:dtype=float64,rows=9,cols=2::m=zero.0,v=zero.0")
    with pytest.raises(ValueError, match="does not match the descriptor"):
        load_reproducer(f)


def test_repro_params_must_be_declared_by_the_variant():
    from refconv import Param, Variant
    from refconv.repro import check_params
    v = Variant(op="matvec", backend="t", name="v", run=lambda problem, out, unroll=4: None,
                params=(Param("unroll", (2, 4), 4),))
    check_params(v, {"unroll": 2})
    w = Variant(op="matvec", backend="t", name="w", run=lambda problem, out, tile=(8, 8): None,
                params=(Param("tile", ((8, 8), (16, 4)), (8, 8)),))
    check_params(w, {"tile": [16, 4]})  # as read back from a reproducer's JSON
    with pytest.raises(ValueError, match=r"--params: matvec/t/v has no launch parameter 'bx'; accepted: unroll"):
        check_params(v, {"bx": 8})
    with pytest.raises(ValueError, match=r"--params: unroll=3 not accepted by matvec/t/v; accepted: 2, 4"):
        check_params(v, {"unroll": 3})


def test_repro_cli_refuses_a_bad_file_with_status_2_and_one_line(faults_env, tmp_path):
    f = _write_reproducer(tmp_path / "r.json", "matvec/faults/correct_a", MATVEC)
    bad = tmp_path / "list.json"
    bad.write_text("[]")
    p = refconv_cli("repro", str(bad), env=faults_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert len((p.stdout + p.stderr).strip().splitlines()) == 1 and "expected an object" in p.stdout + p.stderr
    p = refconv_cli("repro", str(f), "--params", "bx=8", env=faults_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2 and "has no launch parameter 'bx'" in p.stdout + p.stderr, p.stdout + p.stderr
    # a well-formed file whose case the spec refuses (a dtype matvec does not have)
    g = _write_reproducer(tmp_path / "g.json", "matvec/faults/correct_a", MATVEC)
    doc = json.loads(g.read_text())
    for k in ("case", "descriptor"):
        doc[k] = doc[k].replace("dtype=float64", "dtype=int8")
    for a in doc["inputs"].values():
        a["dtype"] = "|i1"
        a["b64"] = base64.b64encode(bytes(int(np.prod(a["shape"])))).decode()
    g.write_text(json.dumps(doc))
    p = refconv_cli("repro", str(g), env=faults_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert "g.json: the saved case cannot be run: " in p.stdout + p.stderr, p.stdout + p.stderr


# ----------------------------------------------------------------------------- --seed and the database

def _drops_last_row(problem, out):
    m, v = problem.inputs["m"], problem.inputs["v"]
    out[...] = m @ v
    if m.shape[0] > 1:
        out[-1] = 0
    return out


def test_seeded_run_saves_its_failing_example_to_the_database(tmp_path, monkeypatch):
    import types

    from refconv import Variant, runner
    from refconv.runner import check_variant
    # the random draws' failure is what the database keeps: no directed case finds the bug first
    monkeypatch.setattr(runner, "directed_cases", lambda v, p: types.SimpleNamespace(cases=[], skipped=[]))
    v = Variant(op="matvec", backend="t", name="drops_last_row", run=_drops_last_row,
                supports={"dtype": ("float64",)})
    db = tmp_path / "db"
    r = check_variant(v, "ci", seed=3, db=str(db), failures_dir=None)
    assert r.status == "fail"
    saved = [f for _, _, fs in os.walk(db) for f in fs]
    assert saved, "a --seed run saved nothing to the example database"
    again = check_variant(v, "ci", seed=3, db=str(db), failures_dir=None)  # replays the saved failure
    assert again.status == "fail" and again.failure["descriptor"] == r.failure["descriptor"]


def test_unsaved_hang_reproducer_is_reported_as_a_warning(tmp_path, capsys):
    from refconv import registry
    from refconv.repro import save_hang_reproducers
    from refconv.runner import VariantResult
    v = registry.variants(op="matvec")[0]
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    r = VariantResult(v.id, "error", reason="hang: example ran longer than 1s (killed)",
                      failure={"case": "matvec:dtype=float64,rows=3,cols=2::m=zero.0,v=zero.0"})
    save_hang_reproducers({v.id: r}, str(not_a_dir), "ci")
    err = capsys.readouterr().err
    assert f"refconv: warning: could not save the reproducer of {v.id}" in err, err
    assert r.reproducer is None and str(not_a_dir) in r.reproducer_error   # the result says why, too
