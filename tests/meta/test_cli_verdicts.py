"""Exit codes and verdicts of ``refconv check`` (and ``list``, pytest) when nothing may be green:
a missing requested target, a run that checked nothing, broken plugins, bad arguments and paths,
messages full of rich markup."""
import json
import os
import subprocess
import sys

import pytest

from helpers import refconv_cli
from helpers import HEADER, plugin_env

NOHW = HEADER + """
def run(problem, out, **_):
    raise AssertionError("never called")
backend = Backend(name="nohw", variants=lambda: [
    Variant(op="kron", backend="nohw", name="needs_hw", run=run, available=lambda: "needs the XYZ card")])
"""
BROKEN_IMPORT = """
raise ImportError("no libfoo.so [/n] here")
"""
LAZY_BOOM = HEADER + """
def _variants():
    raise RuntimeError("lazy boom in tile[/n] list")
backend = Backend(name="lazyboom", variants=_variants)
"""
MARKUP = HEADER + """
def raises(problem, out, **_):
    raise IndexError("tile[i] read past tile[/n] bound")
def wrong(problem, out, **_):
    raise ValueError("bad smem[ty][tx] index")
backend = Backend(name="markup", variants=lambda: [
    Variant(op="kron", backend="markup", name="raises", run=raises, supports={"dtype": ("float64",)}),
    Variant(op="kron", backend="markup", name="wrong", run=wrong, supports={"dtype": ("float64",)})])
"""
CUDA_GPU_IMPORTER = """
import os
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
import numba.cuda  # noqa: F401  -- at import time, in GPU mode
from refconv import Backend
backend = Backend(name="aaa_gpu_importer", variants=lambda: [])
"""


def _gpu_present() -> bool:
    from refconv.tooling.cuda._env import detect_gpu
    return detect_gpu()[0]


def test_cuda_gpu_requested_without_a_gpu_exits_2_with_the_reason_on_stderr():
    if _gpu_present():
        pytest.skip("this machine has a GPU")
    p = refconv_cli("check", "--backend", "numba_cuda", "--op", "matvec", "--cuda", "gpu", "--quiet")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "requested target missing" in p.stderr and "--cuda gpu" in p.stderr


def test_opencl_target_requested_but_not_installed_exits_2_naming_it():
    from refconv import opencl
    if "nvidia" in opencl.platforms():
        pytest.skip("NVIDIA OpenCL is installed here")
    p = refconv_cli("check", "--backend", "opencl", "--op", "matvec", "--opencl", "nvidia", "--quiet")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "'nvidia' is not installed" in p.stderr


def test_a_selection_in_which_nothing_ran_exits_2_with_the_reason(tmp_path):
    env = plugin_env(tmp_path / "site", {"nohw": NOHW})
    p = refconv_cli("check", "--backend", "nohw", "--quiet", "--no-save", env=env, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "nothing was checked" in p.stderr and "needs the XYZ card" in p.stderr
    assert "kron/nohw/needs_hw" in p.stdout   # the matrix still says why


def test_a_plugin_that_fails_to_import_is_shown_everywhere_and_fails_only_when_selected(tmp_path):
    env = plugin_env(tmp_path / "site", {"brokenimp": BROKEN_IMPORT})
    p = refconv_cli("check", "--op", "kron", "--variant", "outer_reshape", "--examples", "2", "--quiet",
                    "--no-save", "--json", "r.json", env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "*/brokenimp/*" in p.stdout and "no libfoo.so [/n] here" in p.stdout
    rows = {r["variant"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert rows["*/brokenimp/*"]["status"] == "unavailable" and rows["kron/example/outer_reshape"]["status"] == "pass"
    assert not (tmp_path / ".hypothesis").exists()   # no stray Hypothesis folder in the working directory
    p = refconv_cli("check", "--backend", "brokenimp", "--quiet", env=env, cwd=tmp_path)
    assert p.returncode == 2 and "no libfoo.so [/n] here" in p.stderr, p.stdout + p.stderr
    p = refconv_cli("list", "--backend", "brokenimp", env=env)
    assert p.returncode == 0 and "failed to load" in p.stdout and "no libfoo.so [/n] here" in p.stdout


def test_a_plugin_whose_lazy_variants_raises_is_unavailable_in_list_check_and_pytest(tmp_path):
    env = plugin_env(tmp_path / "site", {"lazyboom": LAZY_BOOM})
    p = refconv_cli("list", env=env)
    assert p.returncode == 0, p.stderr
    assert "lazy boom in tile[/n] list" in p.stdout and "numba_cpu" in p.stdout
    p = refconv_cli("check", "--backend", "lazyboom", "--quiet", env=env, cwd=tmp_path)
    assert p.returncode == 2 and "lazy boom in tile[/n] list" in p.stderr, p.stdout + p.stderr
    (tmp_path / "test_nothing.py").write_text("")
    q = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refconv",
                        "--refconv-backend", "lazyboom", "-m", "refconv", "-rA", str(tmp_path)],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "INTERNALERROR" not in q.stdout + q.stderr
    assert q.returncode == 1 and "lazy boom in tile[/n] list" in q.stdout and "1 failed" in q.stdout, q.stdout
    q = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refconv", "--refconv-op", "kron",
                        "--refconv-variant", "outer_reshape", "--refconv-examples", "2", "-m", "refconv", "-rs",
                        str(tmp_path)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert q.returncode == 0 and "1 passed, 1 skipped" in q.stdout and "lazy boom" in q.stdout, q.stdout


def test_rich_markup_in_variant_messages_neither_crashes_nor_disappears(tmp_path):
    env = plugin_env(tmp_path / "site", {"markup": MARKUP})
    p = refconv_cli("check", "--backend", "markup", "--examples", "2", "--jobs", "1", "--no-save",
                    env=env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "MarkupError" not in p.stderr
    assert 'tile[i] read past tile[/n] bound' in p.stdout and "smem[ty][tx]" in p.stdout


def test_a_plugin_importing_numba_cuda_in_gpu_mode_cannot_make_a_simulator_run_green(tmp_path):
    env = plugin_env(tmp_path / "site", {"aaa_gpu_importer": CUDA_GPU_IMPORTER})
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    p = refconv_cli("check", "--backend", "numba_cuda", "--op", "matvec", "--cuda", "sim", "--quiet",
                    env=env, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "already imported in GPU mode" in p.stderr and "NUMBA_ENABLE_CUDASIM=1" in p.stderr


@pytest.mark.parametrize("args, named", [
    (("--timeout", "nan"), "--timeout"), (("--timeout", "inf"), "--timeout"), (("--timeout", "-1"), "--timeout"),
    (("--timeout", "1e-9"), "seconds >= 0.1"),
    (("--hang-shrink", "nan"), "--hang-shrink"), (("--variant", ""), "--variant"), (("--jobs", "-1"), "--jobs"),
    (("--examples", "0"), "--examples")])
def test_bad_arguments_exit_2_naming_the_argument(args, named):
    p = refconv_cli("check", "--backend", "no_such_backend", *args)
    assert p.returncode == 2 and named in p.stderr, p.stdout + p.stderr


def test_bad_refconv_environment_value_exits_2_on_stderr():
    env = dict(os.environ, REFCONV_OPENCL="cuda")
    p = refconv_cli("check", "--backend", "example", env=env)
    assert p.returncode == 2 and "REFCONV_OPENCL='cuda'" in p.stderr, p.stdout + p.stderr


def test_no_matching_variant_exits_2_on_stderr():
    p = refconv_cli("check", "--backend", "example", "--op", "sobel")
    assert p.returncode == 2 and "no variant matches" in p.stderr


@pytest.mark.parametrize("opt, make", [
    ("--json", lambda t: t / "adir"), ("--junit", lambda t: t / "missing" / "r.xml"),
    ("--failures-dir", lambda t: t / "afile")])
def test_bad_output_paths_exit_2_naming_the_option_before_the_run(tmp_path, opt, make):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    p = refconv_cli("check", "--backend", "example", "--examples", "2", "--quiet", opt, str(make(tmp_path)),
                    cwd=tmp_path)
    assert p.returncode == 2 and opt in p.stderr, p.stdout + p.stderr
    assert "refconv check" not in p.stdout   # nothing ran: no matrix


def test_a_hung_variant_shows_the_time_it_really_ran(tmp_path, buggy_env):
    p = refconv_cli("check", "--backend", "buggy", "--variant", "hangs", "--timeout", "2", "--hang-shrink", "0",
                    "--examples", "3", "--quiet", "--no-save", "--json", "r.json", env=buggy_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    (r,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert r["reason"].startswith("hang") and r["seconds"] >= 2.0, r


def test_pytest_items_fail_rather_than_skip_when_the_requested_target_is_missing(tmp_path):
    from refconv import opencl
    if "nvidia" in opencl.platforms():
        pytest.skip("NVIDIA OpenCL is installed here")
    (tmp_path / "test_nothing.py").write_text("")
    q = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refconv",
                        "--refconv-backend", "opencl", "--refconv-op", "matvec", "--refconv-opencl", "nvidia",
                        "-m", "refconv", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert q.returncode == 1 and "requested target missing" in q.stdout and " skipped" not in q.stdout, q.stdout


def test_an_unusable_database_is_a_usage_error_before_the_run():
    p = refconv_cli("check", "--backend", "example", "--quiet", "--database", "redis://localhost:1/0",
                    env=dict(os.environ, PYTHONPATH=""))
    try:
        import redis  # noqa: F401
        pytest.skip("the redis extra is installed here")
    except ImportError:
        pass
    assert p.returncode == 2 and "redis" in p.stderr and "refconv check" not in p.stdout, p.stdout + p.stderr
