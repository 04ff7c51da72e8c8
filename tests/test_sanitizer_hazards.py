"""Hazards on by default under the simulator (issue 23 item 2): a plain simulated ``ci`` check --
no flags -- fails each hazard kernel of ``tests/meta/hazard_impls.py`` and names its class (in the
verdict's reason, the matrix line, the JSON and JUnit reports and the reproducer, whose replay
finds it again), while each fixed twin passes; ``--no-sanitize`` (``REFCONV_SANITIZE=0``) gives
the plain simulator back.

The first two tests are the fast tier: one subprocess runs ``runner.check_variant`` (what
``refconv check`` and ``lab/sweeps/catch_rates.py`` run per variant) on every hazard with a fixed
seed, the simulator configured as ``refconv check`` configures it with no options.  The CLI tests
are slow (``SLOW_MODULES`` does not list this module, so they carry the marker themselves)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, plugin_env, refconv_cli

pytest.importorskip("numba_cuda")

META = ROOT / "tests" / "meta"
sys.path.insert(0, str(META))
from hazard_impls import CLASS, FIXED, HAZARDS  # noqa: E402

#: the plugin entry point: the hazards backend of hazard_impls.py
PLUGIN = "from hazard_impls import backend\n"


def _clean_env(base: dict) -> dict:
    env = dict(base)
    for k in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA", "REFCONV_SANITIZE"):
        env.pop(k, None)     # what a user's shell has: no simulator, no sanitizer asked for
    env["PYTHONPATH"] = os.pathsep.join([str(META)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _classes_named(reason: str) -> list:
    """The classes a reason names before its first finding: ``N finding(s) [a, b], first: ...``."""
    head = reason.split(", first:")[0]
    assert "finding(s) [" in head, reason
    return head.split("[", 1)[1].rstrip("]").split(", ")


# ----------------------------------------------------------------------------- fast tier

#: in a fresh process: configure numba_cuda as ``refconv check --cuda sim`` does with no other
#: option, then one seeded ci run per hazard (no shrinking) and a few examples of each twin
DRIVER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from refconv.session import Session
from refconv.runner import check_variant
from refconv.profiles import get_profile
Session(options={"cuda": "sim"}).configure()
from hazard_impls import HAZARDS, FIXED
out = {}
for name, v in HAZARDS.items():
    r = check_variant(v, "ci", seed=0, db="none", failures_dir=None, shrink=False)
    out[name] = {"status": r.status, "reason": r.reason, "classes": [f["class"] for f in r.findings]}
for name, v in FIXED.items():
    r = check_variant(v, get_profile("ci", int(sys.argv[2])), seed=0, db="none", failures_dir=None)
    out[name + "_fixed"] = {"status": r.status, "reason": r.reason, "classes": [f["class"] for f in r.findings]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def in_process():
    env = _clean_env(os.environ)
    p = subprocess.run([sys.executable, "-c", DRIVER, str(META), "6"], capture_output=True, text=True,
                       timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(HAZARDS))
def test_a_plain_simulated_ci_run_fails_the_hazard_and_names_its_class(in_process, name):
    r = in_process[name]
    assert r["status"] == "fail", r
    assert CLASS[name] in r["classes"], r
    assert CLASS[name] in _classes_named(r["reason"]), r   # the class list leads the reason


@pytest.mark.parametrize("name", sorted(FIXED))
def test_the_fixed_twin_passes_with_the_sanitizer_on(in_process, name):
    r = in_process[name + "_fixed"]
    assert r["status"] == "pass" and r["classes"] == [], r


def test_every_hazard_has_a_class_and_a_fixed_twin_with_the_same_op():
    assert set(HAZARDS) == set(FIXED) == set(CLASS)
    from refconv.tooling.cuda.sanitizer import CLASSES
    for name in HAZARDS:
        assert CLASS[name] in CLASSES and HAZARDS[name].op == FIXED[name].op, name
        assert FIXED[name].name == HAZARDS[name].name + "_fixed"


ARMING = r"""
import sys
import refconv.cuda as rc
from refconv.tooling.cuda import sanitizer
rc.configure("sim"{extra})
assert "numba.cuda" not in sys.modules and not sanitizer.is_enabled()   # armed, nothing imported
from numba import cuda                 # whoever imports the simulator first
print("enabled", sanitizer.is_enabled(), "sanitizing", rc.sanitizing())
"""


@pytest.mark.parametrize("extra, expect", [("", "enabled True sanitizing True"),
                                           (", sanitize=False", "enabled False sanitizing False")],
                         ids=["default", "sanitize_false"])
def test_the_sanitizer_is_armed_by_default_and_enabled_at_the_simulators_import(extra, expect):
    """Configuring the simulator imports nothing (an OpenCL-only run pays nothing); the first import
    of ``numba.cuda`` -- here a plain one, as a plugin may do -- enables the sanitizer."""
    env = _clean_env(os.environ)
    p = subprocess.run([sys.executable, "-c", ARMING.replace("{extra}", extra)], capture_output=True,
                       text=True, timeout=300, env=env)
    assert p.returncode == 0 and expect in p.stdout, p.stdout + p.stderr[-3000:]


# ----------------------------------------------------------------------------- the command line

@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """``refconv check --backend hazards --profile ci`` with no option at all, simulator chosen by
    ``auto`` on this GPU-less machine; JSON, JUnit and reproducers written."""
    from refconv.tooling.cuda._env import detect_gpu
    if detect_gpu()[0]:
        pytest.skip("this machine has a GPU: --cuda auto would not pick the simulator")
    root = tmp_path_factory.mktemp("hazards")
    env = _clean_env(plugin_env(root / "site", {"hazards": PLUGIN}))
    p = refconv_cli("check", "--backend", "hazards", "--profile", "ci", "--seed", "0", "--quiet",
                    "--json", "r.json", "--junit", "r.xml", "--failures-dir", "fails", env=env, cwd=root,
                    timeout=900)
    from refconv.variant_id import VariantId
    rows = {}
    if (root / "r.json").exists():
        rows = {VariantId.parse(r["variant"]).name: r for r in json.loads((root / "r.json").read_text())["results"]}
    return root, env, p, rows


@pytest.mark.slow
def test_plain_check_names_each_hazard_class_in_matrix_json_and_junit(cli_run):
    root, _, p, rows = cli_run
    out = p.stdout + p.stderr
    assert p.returncode == 1, out[-3000:]
    junit = (root / "r.xml").read_text()
    for name, cls in CLASS.items():
        row = rows[name]
        assert row["status"] == "fail" and cls in [f["class"] for f in row["findings"]], row
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith(f"fail {row['variant']} "))
        assert cls in _classes_named(line.split(" — ", 1)[1]), line      # the matrix's reason line
        assert rows[name + "_fixed"]["status"] == "pass", rows[name + "_fixed"]
        case = junit[junit.index(f'name="{row["variant"]}"'):]
        assert cls in case[:case.index("</testcase>")], case[:2000]


@pytest.mark.slow
def test_the_reproducer_records_the_default_and_its_replay_finds_the_class_again(cli_run):
    root, env, _, rows = cli_run
    row = rows["negative_shared_index"]
    doc = json.loads(Path(row["reproducer"] if os.path.isabs(row["reproducer"])
                          else root / row["reproducer"]).read_text())
    assert doc["backend_options"]["sanitize"] == "auto", doc["backend_options"]
    assert "out-of-bounds" in [f["class"] for f in doc["findings"]]
    path = str(root / row["reproducer"])
    r = refconv_cli("repro", path, env=env, cwd=root)
    assert r.returncode == 1 and "now: fail" in r.stdout and "out-of-bounds" in r.stdout, r.stdout[-3000:]
    r = refconv_cli("repro", path, "--no-sanitize", env=env, cwd=root)    # the plain simulator: right values
    assert r.returncode == 0 and "now: pass" in r.stdout and "--no-sanitize" in r.stdout, r.stdout[-3000:]


@pytest.mark.slow
def test_no_sanitize_and_refconv_sanitize_0_give_the_plain_simulator(tmp_path):
    """The scan's wrapped ``s[-1]`` gives right values: the plain simulator passes it."""
    env = _clean_env(plugin_env(tmp_path / "site", {"hazards": PLUGIN}))
    for extra, e in ((["--no-sanitize"], env), ([], dict(env, REFCONV_SANITIZE="0"))):
        p = refconv_cli("check", "--backend", "hazards", "--variant", "negative_shared_index", "--cuda", "sim",
                        "--seed", "0", "--quiet", "--no-save", "--json", "r.json", *extra, env=e, cwd=tmp_path)
        (row,) = json.loads((tmp_path / "r.json").read_text())["results"]
        assert p.returncode == 0 and row["status"] == "pass" and not row["findings"], p.stdout[-3000:]


@pytest.mark.slow
def test_the_pytest_plugin_fails_the_hazard_naming_its_class_and_passes_the_twin(tmp_path):
    env = _clean_env(plugin_env(tmp_path / "site", {"hazards": PLUGIN}))
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refconv", "--refconv-backend", "hazards",
            "--refconv-variant", "negative_shared_index*", "--refconv-seed", "0", "--refconv-database", "none",
            "--refconv-cuda", "sim", "-v"]
    p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-2000:]
    assert "matvec/hazards/negative_shared_index FAILED" in p.stdout, p.stdout[-3000:]
    assert "matvec/hazards/negative_shared_index_fixed PASSED" in p.stdout, p.stdout[-3000:]
    assert "[out-of-bounds]" in p.stdout and "'class': 'out-of-bounds'" in p.stdout, p.stdout[-3000:]
    p = subprocess.run(args + ["--refconv-no-sanitize"], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
