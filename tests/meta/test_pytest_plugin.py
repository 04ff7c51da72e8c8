"""The pytest plugin: one test id per variant, statistics shown, failures carry the case."""
import json
import subprocess
import sys


def _pytest(args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=600)


def test_one_test_per_variant_with_statistics(tmp_path):
    p = _pytest(["--refconv", "--refconv-backend", "example", "--refconv-examples", "5", "-v",
                 "--refconv-database", "none", "-rA"], cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "refconv::matvec/example/numpy_rows PASSED" in p.stdout
    assert "refconv Hypothesis statistics" in p.stdout and "5 examples" in p.stdout


def test_failing_variant_reports_the_minimised_case_and_reproducer(tmp_path, buggy_env):
    p = _pytest(["--refconv", "--refconv-backend", "buggy", "--refconv-variant", "drop_last_col",
                 "--refconv-examples", "25", "--refconv-seed", "2"], cwd=tmp_path, env=buggy_env)
    assert p.returncode == 1, p.stdout[-3000:]
    assert "matvec/buggy/drop_last_col" in p.stdout and "minimised case: matvec:" in p.stdout
    assert "replay: refconv repro" in p.stdout
    saved = p.stdout.split("replay: refconv repro ", 1)[1].split()[0]   # the plugin's options are recorded too
    doc = json.loads((tmp_path / saved).read_text())
    assert doc["backend_options"].get("sanitize") == "auto" and doc["backend_options"].get("opencl") in ("auto", "pocl",
                                                                                                    "oclgrind", "nvidia")


def test_plugin_runs_under_xdist(tmp_path):
    p = _pytest(["--refconv", "--refconv-backend", "example", "--refconv-examples", "3", "-n", "2",
                 "--refconv-database", "none"], cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "2 passed" in p.stdout, p.stdout[-2000:]   # the example backend's two variants
