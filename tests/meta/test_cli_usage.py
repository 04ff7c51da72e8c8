"""Wrong inputs of the command line get exit 2 and one line naming them, before any work; the
options a user expects (``--version``, ``--json -``, ``--variant`` twice) do what they say; the
reports say which run wrote them.  The tests that run ``refconv`` in a subprocess are ``slow``
(the fast tier, ``-m "not slow"``, keeps the in-process ones)."""
import datetime
import json
import os

import pytest

from helpers import HEADER, plugin_env, refconv_cli

QUICK = ("--backend", "example", "--examples", "2", "--seed", "3", "--quiet", "--database", "none", "--no-save")

TYPO = HEADER + """
from refconv import Range
def run(problem, out, **_):
    out[...] = problem.inputs["m"] @ problem.inputs["v"]
backend = Backend(name="typo", variants=lambda: [
    Variant(op="matvec", backend="typo", name="small", run=run, supports={"colz": Range(1, 4)})])
"""


def _no_work(p):
    """Nothing was checked: no matrix and no result line on stdout."""
    return "refconv check" not in p.stdout and " pass " not in p.stdout


@pytest.mark.slow   # a refconv subprocess
def test_bogus_refconv_tolerance_exits_2_naming_the_variable_before_any_work():
    p = refconv_cli("check", *QUICK, env={**os.environ, "REFCONV_TOLERANCE": "bogus"})
    assert p.returncode == 2, p.stdout + p.stderr
    assert "REFCONV_TOLERANCE='bogus'" in p.stderr and "proven" in p.stderr and "probabilistic" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and _no_work(p), p.stdout + p.stderr


@pytest.mark.slow   # a refconv subprocess
def test_a_misspelt_supports_key_is_refused_naming_the_key_and_the_accepted_keys(tmp_path):
    env = plugin_env(tmp_path / "plug", {"typo": TYPO})
    p = refconv_cli("check", "--backend", "typo", "--examples", "2", "--quiet", "--no-save", env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "'colz'" in p.stderr and "cols" in p.stderr and "rows" in p.stderr, p.stderr
    assert _no_work(p)


def test_variant_refuses_an_unknown_supports_key_and_accepts_dims_options_and_fills():
    from refconv import Range, Variant

    def run(problem, out):
        return out
    with pytest.raises(ValueError, match=r"'colz'.*accepted for matvec: .*rows, cols"):
        Variant("matvec", "t", "v", run, supports={"colz": Range(1, 4)})
    Variant("matvec", "t", "v", run, supports={"cols": Range(1, 4), "dtype": ("float32",), "fill.m": ("zero",)})
    Variant("filter2d", "t", "v", run, supports={"boundary": ("reflect",), "fill.weights": ("one",)})


@pytest.mark.slow   # a refconv subprocess
def test_json_and_junit_naming_the_same_file_are_refused_before_any_work(tmp_path):
    p = refconv_cli("check", *QUICK, "--json", "r.out", "--junit", "./r.out", cwd=tmp_path)
    assert p.returncode == 2 and "--json" in p.stderr and "--junit" in p.stderr and "same file" in p.stderr
    assert _no_work(p) and not (tmp_path / "r.out").exists()


@pytest.mark.slow   # a refconv subprocess
def test_json_dash_writes_the_report_to_stdout_and_everything_else_to_stderr(tmp_path):
    p = refconv_cli("check", *QUICK, "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)    # stdout is the report and nothing else
    assert {r["variant"] for r in rep["results"]} == {"matvec/example/numpy_rows", "kron/example/outer_reshape"}
    assert "refconv check" in p.stderr and "2 variants" in p.stderr   # the matrix went to stderr
    assert os.listdir(tmp_path) == []                                 # no file named '-'


@pytest.mark.slow   # a refconv subprocess
def test_the_json_report_records_seed_version_start_and_command_line(tmp_path):
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    p = refconv_cli("check", *QUICK, "--json", "r.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    from importlib.metadata import version
    assert rep["seed"] == 3 and rep["refconv_version"] == version("refconv")
    started = datetime.datetime.fromisoformat(rep["started"])
    assert before <= started <= datetime.datetime.now(datetime.timezone.utc)
    assert rep["command"].startswith("refconv check ") and "--seed 3" in rep["command"] and "--json r.json" in rep["command"]


@pytest.mark.slow   # a refconv subprocess
def test_variant_given_twice_selects_the_variants_of_both_globs():
    p = refconv_cli("list", "--backend", "example", "--variant", "numpy_rows", "--variant", "outer_*")
    assert p.returncode == 0, p.stderr
    assert "numpy_rows" in p.stdout and "outer_reshape" in p.stdout and "2 variants" in p.stdout


@pytest.mark.slow   # a refconv subprocess
def test_an_unwritable_database_exits_2_naming_it(tmp_path):
    (tmp_path / "afile").write_text("x")
    p = refconv_cli("check", *QUICK[:-3], "--database", str(tmp_path / "afile" / "db"))
    assert p.returncode == 2 and "--database" in p.stderr and "afile" in p.stderr, p.stdout + p.stderr
    assert _no_work(p)
    env = {**os.environ, "REFCONV_DATABASE": str(tmp_path / "afile" / "db")}
    p = refconv_cli("check", *QUICK[:-3], env=env)
    assert p.returncode == 2 and "REFCONV_DATABASE" in p.stderr, p.stdout + p.stderr


@pytest.mark.slow   # a refconv subprocess
def test_a_backend_option_given_while_none_of_its_variants_is_selected_warns():
    p = refconv_cli("check", *QUICK, "--sanitize")
    assert p.returncode == 0, p.stderr
    warn = [line for line in p.stderr.splitlines() if "--sanitize" in line]
    assert len(warn) == 1 and "numba_cuda" in warn[0] and "no effect" in warn[0], p.stderr
    p = refconv_cli("check", *QUICK)
    assert "warning" not in p.stderr


@pytest.mark.slow   # a refconv subprocess
@pytest.mark.parametrize("n", ["100000000000000000000", "1e20", "0"])
def test_examples_beyond_the_accepted_range_are_refused_saying_what_is_accepted(n):
    p = refconv_cli("check", "--backend", "example", "--examples", n)
    assert p.returncode == 2 and "--examples" in p.stderr and "from 1 to 100000" in p.stderr


@pytest.mark.slow   # a refconv subprocess
def test_version_prints_the_installed_version():
    from importlib.metadata import version
    p = refconv_cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"refconv {version('refconv')}"


def _shard(tmp_path, k, seed=3):
    doc = {"profile": "ci", "seconds": 1.0, "shard": {"k": k, "n": 2, "of": 2}, "seed": seed,
           "refconv_version": "0.1.0", "started": f"2026-01-0{k}T00:00:00+00:00", "command": f"refconv check --shard {k}/2",
           "results": [{"variant": f"matvec/b/v{k}", "status": "pass", "examples": 1}]}
    path = tmp_path / f"s{k}.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.slow   # a refconv subprocess
def test_merge_into_an_unwritable_folder_exits_2_with_one_line_before_printing_anything(tmp_path):
    (tmp_path / "afile").write_text("x")
    p = refconv_cli("merge", _shard(tmp_path, 1), _shard(tmp_path, 2), "--json", str(tmp_path / "afile" / "m.json"))
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--json" in p.stderr and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert p.stdout == ""


@pytest.mark.slow   # a refconv subprocess
def test_merge_records_the_shards_seed_and_version_and_its_own_command_line(tmp_path):
    p = refconv_cli("merge", _shard(tmp_path, 1), _shard(tmp_path, 2), "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["seed"] == 3 and doc["refconv_version"] == "0.1.0" and doc["started"] == "2026-01-01T00:00:00+00:00"
    assert [s["command"] for s in doc["shards"]] == ["refconv check --shard 1/2", "refconv check --shard 2/2"]
    assert doc["merged"]["command"].startswith("refconv merge ")
    p = refconv_cli("merge", _shard(tmp_path, 1, seed=3), _shard(tmp_path, 2, seed=4), "--json", "-", cwd=tmp_path)
    assert json.loads(p.stdout)["seed"] is None      # shards of different seeds: no one seed


def test_reproducers_of_one_case_under_two_targets_are_two_files_named_after_the_options(tmp_path):
    from refconv import Problem, registry
    from refconv.checking import ExampleResult
    from refconv.repro import save_reproducer
    v = registry.variants(op="matvec", backend="opencl")[0]
    problem = Problem("matvec", {"dtype": "float32", "rows": 2, "cols": 3}, {}, {"m": "one.0", "v": "one.0"})
    params = v.default_params()
    er = ExampleResult("fail", problem.descriptor(), params, message="x")
    base = {"cuda": "sim", "sanitize": True, "opencl": "auto"}     # other backends' options: not in the name
    paths = [save_reproducer(tmp_path, v, problem, params, er, "ci", backend_options={**base, "opencl": t})
             for t in ("oclgrind", "pocl", "auto")]
    assert len({p.name for p in paths}) == 3 and all(p.exists() for p in paths)
    assert "__opencl-oclgrind-" in paths[0].name and "__opencl-pocl-" in paths[1].name
    assert "opencl-" not in paths[2].name and "sanitize" not in paths[2].name


def test_pyproject_gives_setuptools_nothing_to_warn_about():
    """``pip install -e .`` printed about 60 lines of SetuptoolsDeprecationWarning (the license
    as a TOML table); the build must configure without a warning."""
    import warnings

    from helpers import ROOT
    setuptools = pytest.importorskip("setuptools")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dist = apply_configuration(Distribution(), str(ROOT / "pyproject.toml"))
    finally:
        os.chdir(cwd)
    assert dist.get_name() == "refconv"
    assert [str(w.message).splitlines()[0] for w in caught if "setuptools" in type(w.message).__module__
            or issubclass(w.category, DeprecationWarning)] == [], setuptools.__version__


def test_a_backend_option_declared_by_several_backends_warns_only_when_none_of_them_is_selected(monkeypatch):
    from refconv import Backend, BackendOption, Variant, registry
    from refconv.session import Session
    opt = BackendOption("--target", "target", "where to run", choices=("a", "b"), default="a")

    def run(problem, out):
        return out
    vs = {n: Variant("matvec", n, "v", run) for n in ("first", "second", "other")}
    fake = {"first": Backend("first", lambda: [vs["first"]], options=(opt,)),
            "second": Backend("second", lambda: [vs["second"]], options=(opt,)),
            "other": Backend("other", lambda: [vs["other"]])}
    monkeypatch.setattr(registry, "backends", lambda: fake)
    s = Session(options={"target": "b"})
    assert s.unused_options([vs["second"]]) == []          # the second declarer is selected
    (line,) = s.unused_options([vs["other"]])
    assert "--target" in line and "first or second" in line and "no effect" in line
    assert Session(options={"target": None}).unused_options([vs["other"]]) == []   # not given: silent


def test_a_usage_error_raised_inside_a_command_exits_2_with_its_message(monkeypatch, capsys):
    from refconv import cli
    from refconv.errors import UsageError

    def bad_input(ns):
        raise UsageError("--thing 'x' not accepted; accepted: y")
    monkeypatch.setattr(cli, "cmd_specs", bad_input)
    assert cli.main(["specs"]) == 2
    assert "refconv specs: --thing 'x' not accepted; accepted: y" in capsys.readouterr().err


@pytest.mark.parametrize("internal", [ValueError("a bug"), KeyError("a bug")])
def test_an_internal_value_or_key_error_is_a_traceback_not_a_usage_error(monkeypatch, internal):
    from refconv import cli

    def buggy(ns):
        raise internal
    monkeypatch.setattr(cli, "cmd_specs", buggy)
    with pytest.raises(type(internal), match="a bug"):
        cli.main(["specs"])


def test_the_tolerance_is_set_for_the_process_without_touching_the_environment(monkeypatch):
    from refconv import tolerance
    from refconv.session import Session
    monkeypatch.delenv("REFCONV_TOLERANCE", raising=False)
    try:
        Session(tolerance="probabilistic").apply_tolerance()
        assert tolerance.default_mode() == "probabilistic" and "REFCONV_TOLERANCE" not in os.environ
        tolerance.set_mode(None)
        monkeypatch.setenv("REFCONV_TOLERANCE", "probabilistic")   # the user's setting, when the run set none
        assert tolerance.default_mode() == "probabilistic"
        tolerance.set_mode("proven")                               # the run's choice wins over it
        assert tolerance.default_mode() == "proven"
        with pytest.raises(ValueError, match="'loose'; accepted: proven, probabilistic"):
            tolerance.set_mode("loose")
    finally:
        tolerance.set_mode(None)


MODE_SPY = HEADER + """
def run(problem, out, **_):
    from refconv.tolerance import default_mode
    raise RuntimeError(f"worker mode={default_mode()}")
backend = Backend(name="modespy", variants=lambda: [
    Variant(op="matvec", backend="modespy", name="spy", run=run, supports={"dtype": ("float64",)})])
"""


@pytest.mark.slow   # a refconv subprocess
@pytest.mark.parametrize("flag,env_value,seen", [("probabilistic", None, "probabilistic"),
                                                  ("proven", "probabilistic", "proven")])
def test_workers_check_with_the_tolerance_of_the_command_line(tmp_path, flag, env_value, seen):
    env = plugin_env(tmp_path / "site", {"modespy": MODE_SPY})
    env.pop("REFCONV_TOLERANCE", None)
    if env_value:
        env["REFCONV_TOLERANCE"] = env_value     # reaches the workers; --tolerance must still win
    p = refconv_cli("check", "--backend", "modespy", "--examples", "1", "--jobs", "1", "--hang-shrink", "0",
                    "--quiet", "--database", "none", "--no-save", "--tolerance", flag, "--json", "r.json",
                    env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    (row,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert f"worker mode={seen}" in row["reason"], row
