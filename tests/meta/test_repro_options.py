"""A reproducer records the backend options of the run that found it, and ``refconv repro``
replays with them: a finding of ``--sanitize`` is found again by a replay that does not repeat
the flag (it used to replay without the sanitizer and say "now: pass"); the sanitizer is on by
default under the simulator, and ``--no-sanitize`` / ``REFCONV_SANITIZE=0`` turn it off.  The command line and
the environment still override what was recorded."""
from __future__ import annotations

import json
import os

import pytest
from helpers import HEADER, plugin_env, refconv_cli

pytest.importorskip("numba_cuda")

#: a third-party numba.cuda variant whose kernel reads a neighbour's shared-memory element with no
#: barrier: the sanitizer names the race, while the result is right (the plain simulator passes it)
RACY = HEADER + '''
from numba import cuda, float64   # the tests run with NUMBA_ENABLE_CUDASIM=1


@cuda.jit
def racy_matvec(m, v, out):
    s = cuda.shared.array(32, float64)
    t = cuda.threadIdx.x
    s[t] = 1.0
    x = s[(t + 1) % 32]  # read of a neighbour's write with no barrier between: a race
    i = cuda.blockIdx.x * 32 + t
    if i < out.shape[0]:
        acc = 0.0
        for j in range(m.shape[1]):
            acc += m[i, j] * v[j]
        out[i] = acc if x != 12345.0 else 0.0


def run(problem, out, **_):
    m, v = problem.inputs["m"], problem.inputs["v"]
    d = cuda.to_device(out)
    racy_matvec[(m.shape[0] + 31) // 32, 32](cuda.to_device(m), cuda.to_device(v), d)
    d.copy_to_host(out)


backend = Backend(name="racy", variants=lambda: [
    Variant(op="matvec", backend="racy", name="shared_race", run=run, supports={"dtype": ("float64",)})])
'''


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    """``refconv check --sanitize`` of the racy variant: its run and the reproducer it saved."""
    root = tmp_path_factory.mktemp("racy")
    env = plugin_env(root / "site", {"racy": RACY})
    for k in [k for k in env if k.startswith("REFCONV_") and k != "REFCONV_DATABASE"]:
        del env[k]   # the replay must get the options from the file, not from this environment
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    p = refconv_cli("check", "--backend", "racy", "--sanitize", "--examples", "5", "--seed", "1", "--quiet",
                    "--failures-dir", str(root / "fails"), env=env, cwd=root)
    files = sorted((root / "fails").glob("*.json"))
    return env, p, files


def test_the_sanitizer_finding_is_saved_with_the_options_of_the_run(found):
    _, p, files = found
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert "shared-race" in p.stdout or "uninitialized-read" in p.stdout, p.stdout[-3000:]
    assert len(files) == 1, files
    doc = json.loads(files[0].read_text())
    assert doc["backend_options"]["sanitize"] is True and doc["backend_options"]["cuda"] == "auto"
    assert doc["tolerance"] == "proven" and doc["findings"]


def test_replay_without_the_flag_reapplies_it_and_reports_the_finding_again(found):
    env, _, files = found
    r = refconv_cli("repro", str(files[0]), env=env)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert "options: --sanitize (recorded in the reproducer)" in r.stdout, r.stdout[-3000:]
    assert "now: fail" in r.stdout and "finding: " in r.stdout and "shared-race" in r.stdout, r.stdout[-3000:]


def test_the_environment_overrides_a_recorded_option(found):
    """REFCONV_SANITIZE=0 turns the recorded --sanitize off: the plain simulator passes the racy
    kernel (what every replay said before the options were recorded), and the replay says so."""
    env, _, files = found
    r = refconv_cli("repro", str(files[0]), env=dict(env, REFCONV_SANITIZE="0"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "the reproducer recorded --sanitize; the command line or the environment changed them" in r.stdout
    assert "now: pass" in r.stdout and "finding: " not in r.stdout, r.stdout[-3000:]


def test_a_reproducer_without_recorded_options_replays_with_the_defaults(found, tmp_path):
    """The defaults sanitize every simulated launch (issue 23): a file written before options were
    recorded finds the race again; ``--no-sanitize`` gives the plain simulator's pass."""
    env, _, files = found
    doc = json.loads(files[0].read_text())
    del doc["backend_options"], doc["tolerance"]      # a file written before options were recorded
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    r = refconv_cli("repro", str(old), env=env)
    assert r.returncode == 1 and "now: fail" in r.stdout and "shared-race" in r.stdout, r.stdout[-3000:]
    assert "options:" not in r.stdout, r.stdout[-3000:]
    r = refconv_cli("repro", str(old), "--no-sanitize", env=env)   # the command line turns it off
    assert r.returncode == 0 and "now: pass" in r.stdout and "options: --no-sanitize" in r.stdout, r.stdout[-3000:]
    assert os.path.exists(old)


def test_a_plain_check_records_the_default_sanitize_and_finds_the_race(found, tmp_path):
    """No flag at all: the simulator sanitizer is on by default, the race is named and the
    reproducer records ``sanitize: "auto"`` (the default, which its replay re-applies)."""
    env, _, _ = found
    p = refconv_cli("check", "--backend", "racy", "--examples", "5", "--seed", "1", "--quiet",
                    "--failures-dir", str(tmp_path / "fails"), env=env, cwd=tmp_path)
    assert p.returncode == 1 and "shared-race" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]
    (f,) = sorted((tmp_path / "fails").glob("*.json"))
    assert json.loads(f.read_text())["backend_options"]["sanitize"] == "auto"
