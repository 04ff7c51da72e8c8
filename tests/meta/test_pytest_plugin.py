"""The pytest plugin: one test id per variant, statistics shown, failures carry the case."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


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


# ------------------------------------------------- the plugin behaves like pytest (issue 27 point 3)
# pytester runs pytest in a fresh folder outside the repository, as a user would.

EXAMPLE = ["--refconv-backend", "example", "--refconv-examples", "3"]
#: the example backend's two variants, as pytest must name them
IDS = ["refconv::matvec/example/numpy_rows", "refconv::kron/example/outer_reshape"]


@pytest.fixture
def run(pytester, monkeypatch):
    """``run(*args)``: pytest in ``pytester.path`` (a subprocess), without the REFCONV_* and
    Hypothesis settings of the environment running these tests."""
    for var in ("REFCONV_DATABASE", "REFCONV_PROFILE", "REFCONV_TOLERANCE", "HYPOTHESIS_STORAGE_DIRECTORY",
                "PYTEST_XDIST_AUTO_NUM_WORKERS"):
        monkeypatch.delenv(var, raising=False)

    def run(*args, timeout=300):
        return pytester.runpytest_subprocess(*args, timeout=timeout)
    return run


def _collected_ids(result) -> list[str]:
    return [line.strip() for line in result.outlines if line.startswith("refconv::")]


def test_collect_only_lists_the_items_with_their_node_ids_and_counts_them(run):
    r = run("--refconv", *EXAMPLE, "--collect-only", "-q")
    assert r.ret == 0, r.stdout.str()[-3000:]
    assert _collected_ids(r) == IDS
    r.stdout.fnmatch_lines(["2 tests collected*"])


def test_a_run_reports_the_items_it_collected(run):
    r = run("--refconv", *EXAMPLE, "-v")
    r.stdout.fnmatch_lines(["*collected 2 items*", f"{IDS[0]} PASSED*", f"{IDS[1]} PASSED*"])
    r.assert_outcomes(passed=2)


def test_k_and_m_select_among_the_refconv_items(run):
    r = run("--refconv", *EXAMPLE, "-k", "outer_reshape", "-v")
    r.assert_outcomes(passed=1, deselected=1)
    r.stdout.fnmatch_lines([f"{IDS[1]} PASSED*"])
    r = run("--refconv", *EXAMPLE, "-m", "not refconv")
    assert r.ret == 5, r.stdout.str()[-3000:]          # pytest's "no tests ran"
    r.assert_outcomes(deselected=2)


def test_a_node_id_pytest_printed_selects_that_item_when_passed_back(run):
    ids = _collected_ids(run("--refconv", *EXAMPLE, "--collect-only", "-q"))
    assert len(ids) == 2
    for args in ([ids[1]], ["--refconv", ids[1]]):     # the node id alone turns the plugin on
        r = run(*args, *EXAMPLE, "-v")
        r.assert_outcomes(passed=1)
        r.stdout.fnmatch_lines(["*collected 1 item*", f"{ids[1]} PASSED*"])
    r = run("--refconv", *EXAMPLE, "--deselect", ids[0], "-v")
    r.assert_outcomes(passed=1, deselected=1)
    r.stdout.fnmatch_lines([f"{ids[1]} PASSED*"])
    r = run("refconv", *EXAMPLE)                       # the collector: every refconv item, no files
    r.assert_outcomes(passed=2)


def test_lf_reruns_only_the_variant_that_failed(run, monkeypatch, buggy_env):
    monkeypatch.setenv("PYTHONPATH", buggy_env["PYTHONPATH"])
    args = ("--refconv", "--refconv-backend", "[eb]*", "--refconv-op", "kron", "--refconv-examples", "10",
            "--refconv-seed", "1")                     # kron/example (passes), kron/buggy (fails)
    r = run(*args)
    r.assert_outcomes(passed=1, failed=1)
    r = run(*args, "--lf", "-v")
    r.assert_outcomes(failed=1, deselected=1)
    r.stdout.fnmatch_lines(["*rerun previous 1 failure*", "refconv::kron/buggy/transposed_block FAILED*"])


@pytest.mark.parametrize("args, env, named", [
    (["--refconv-examples", "0"], {}, "--refconv-examples '0' not accepted; accepted: an integer >= 1"),
    (["--refconv-examples", "many"], {}, "--refconv-examples 'many' not accepted; accepted: an integer >= 1"),
    (["--refconv-seed", "x"], {}, "--refconv-seed 'x' not accepted; accepted: an integer"),
    (["--refconv-profile", "fast"], {}, "--refconv-profile 'fast' not accepted; accepted: ci, dev, thorough, gpu"),
    ([], {"REFCONV_PROFILE": "fast"}, "environment REFCONV_PROFILE='fast' not accepted; accepted: ci, dev,*"),
    ([], {"REFCONV_TOLERANCE": "loose"}, "environment REFCONV_TOLERANCE='loose' not accepted; accepted: proven*"),
    (["--refconv-backend", "nosuch"], {}, "--refconv-backend 'nosuch' matches no installed backend; "
                                          "installed backends: *example*"),
    (["--refconv-op", "nosuch"], {}, "--refconv-op 'nosuch' matches no op; installed ops: *matvec*"),
    (["refconv::matvec/example/nosuch"], {}, "not found: refconv::matvec/example/nosuch*"),
    (["--refconv-database", "redis://localhost:1/0"], {}, "--refconv-database 'redis://localhost:1/0' not accepted: "
                                                          "*needs the redis extra*"),
], ids=["examples-0", "examples-word", "seed", "profile", "profile-env", "tolerance-env", "unknown-backend",
        "unknown-op", "unknown-node-id", "database"])
def test_a_bad_option_value_is_one_usage_error_before_anything_runs(run, monkeypatch, args, env, named):
    if "redis" in named and importlib.util.find_spec("redis"):
        pytest.skip("the redis extra is installed here")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = run("--refconv", "--refconv-backend", "example", *args) if "--refconv-backend" not in args \
        else run("--refconv", *args)
    assert r.ret == 4, r.stdout.str()[-2000:] + r.stderr.str()[-2000:]    # pytest.UsageError
    errors = [line for line in r.errlines if line.startswith("ERROR:")]
    assert len(errors) == 1, r.errlines
    r.stderr.fnmatch_lines([f"ERROR: {named}"])
    assert "passed" not in r.stdout.str() and "failed" not in r.stdout.str()


def _new_entries(pytester, before) -> set:
    """What appeared in ``pytester.path`` since ``before``, less pytester's own files (its
    ``--basetemp`` folders ``runpytest-N`` and the ``stdout``/``stderr`` captures)."""
    return {n for n in set(os.listdir(pytester.path)) - before
            if not n.startswith("runpytest-") and n not in ("stdout", "stderr")}


def test_nothing_is_written_into_the_project_but_pytests_cache(run, pytester, monkeypatch, buggy_env):
    monkeypatch.setenv("PYTHONPATH", buggy_env["PYTHONPATH"])
    args = ("--refconv", "--refconv-backend", "[eb]*", "--refconv-op", "kron", "--refconv-examples", "10",
            "--refconv-seed", "1")
    before = set(os.listdir(pytester.path))
    r = run(*args)
    r.assert_outcomes(passed=1, failed=1)
    saved = Path(r.stdout.str().split("replay: refconv repro ", 1)[1].split()[0])
    cache = pytester.path / ".pytest_cache" / "d" / "refconv"
    assert saved.parent == cache / "failures" and saved.is_file()
    assert (cache / "examples").is_dir()               # the example database, for the next run
    new = _new_entries(pytester, before)
    assert new == {".pytest_cache"}, new               # no .hypothesis, no .refconv
    # without pytest's cache: no example database, the reproducer in pytest's temporary directory
    shutil.rmtree(pytester.path / ".pytest_cache")
    r = run("-p", "no:cacheprovider", *args)
    r.assert_outcomes(passed=1, failed=1)
    saved = Path(r.stdout.str().split("replay: refconv repro ", 1)[1].split()[0])
    assert saved.is_file() and saved.parent.parent.name == "refconv" and saved.parent.parent.parent.name.startswith(
        "runpytest-")
    new = _new_entries(pytester, before)
    assert new == set(), new


def test_failures_dir_and_database_options_put_the_artefacts_where_asked(run, pytester, monkeypatch, buggy_env,
                                                                          tmp_path):
    monkeypatch.setenv("PYTHONPATH", buggy_env["PYTHONPATH"])
    r = run("-p", "no:cacheprovider", "--refconv", "--refconv-backend", "buggy", "--refconv-variant",
            "transposed_block", "--refconv-examples", "10", "--refconv-seed", "1",
            "--refconv-failures-dir", str(tmp_path / "f"), "--refconv-database", str(tmp_path / "db"))
    r.assert_outcomes(failed=1)
    assert [p.parent for p in (tmp_path / "f").iterdir()] == [tmp_path / "f"]
    assert (tmp_path / "db").is_dir()          # the database is there (a directed case found the bug: not saved)


def test_under_xdist_selection_and_statistics_work_as_without_it(run):
    r = run("--refconv", *EXAMPLE, "-n", "2", "-k", "outer_reshape")
    r.assert_outcomes(passed=1)                         # (xdist's controller does not count the deselected)
    r.stdout.fnmatch_lines(["2 workers [[]1 item[]]", "*refconv Hypothesis statistics*",
                            "kron/example/outer_reshape: * directed cases + 3 examples*"])


def test_the_gpu_profile_skips_simulated_variants_with_the_reason(run):
    r = run("--refconv", "--refconv-backend", "numba_cuda", "--refconv-op", "matvec",
            "--refconv-variant", "block_per_row", "--refconv-profile", "gpu", "-rs", timeout=120)
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["SKIPPED*block_per_row unavailable: profile 'gpu'*a simulator*"])


def test_the_users_own_hypothesis_tests_keep_their_hypothesis_folder(run, pytester):
    """The refconv items keep Hypothesis's caches out of the project only while they run: a test
    of the user's that runs after them (the conftest reverses the order) sees its usual home."""
    pytester.makeconftest("def pytest_collection_modifyitems(items):\n    items.reverse()\n")
    pytester.makepyfile(test_mine="""
        import os
        from pathlib import Path
        from hypothesis.configuration import storage_directory

        def test_home():
            assert storage_directory(intent_to_write=False).path == Path(os.getcwd()) / ".hypothesis"
        """)
    r = run("--refconv", *EXAMPLE, "-v")
    r.assert_outcomes(passed=3)
    r.stdout.fnmatch_lines([f"{IDS[1]} PASSED*", f"{IDS[0]} PASSED*", "test_mine.py::test_home PASSED*"])
