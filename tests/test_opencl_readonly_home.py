"""OpenCL with a HOME that cannot be written (issue 43): pyopencl's compiler cache failed there and
pyopencl then raised ``KeyError: 'PYOPENCL_CACHE_FAILURE_FATAL'`` for every build, so every correct
OpenCL variant was an error (and PoCL vanished, leaving Oclgrind).  refconv moves the caches to a
private folder in the temporary directory, or turns them off, says so in one line, and the
kernels pass."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import refconv_cli

pytest.importorskip("pyopencl")


def _readonly_home(tmp_path):
    """A HOME nothing can be written in: a read-only directory, or for root (whom permission bits
    do not stop) a HOME below a file."""
    if os.geteuid() != 0:
        home = tmp_path / "home"
        home.mkdir()
        home.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return home
    (tmp_path / "afile").write_text("x")
    return tmp_path / "afile" / "home"


def _env(tmp_path, **kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "POCL_CACHE_DIR", "PYOPENCL_NO_CACHE", "PYOPENCL_CACHE_FAILURE_FATAL")
           and not k.startswith("REFCONV_")}
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env.update(HOME=str(_readonly_home(tmp_path)), TMPDIR=str(tmp), REFCONV_DATABASE="none", **kw)
    return env


@pytest.mark.slow
def test_opencl_variants_pass_with_a_read_only_home_and_say_where_the_cache_went(tmp_path):
    env = _env(tmp_path)
    p = refconv_cli("check", "--backend", "opencl", "--op", "matvec", "--opencl", "pocl", "--examples", "3",
                    "--json", str(tmp_path / "r.json"), "-q", env=env, cwd=tmp_path)
    out = p.stdout + p.stderr
    if "OpenCL target 'pocl' is not installed" in out:
        pytest.skip("PoCL is not installed here")
    assert p.returncode == 0, out[-3000:]
    assert "PYOPENCL_CACHE_FAILURE_FATAL" not in out
    said = [ln for ln in p.stderr.splitlines() if "cannot be written" in ln]
    assert len(said) == 1, p.stderr                       # once, though every worker builds kernels
    assert said[0].startswith("refconv: cache folder ") and str(tmp_path / "tmp") in said[0], said


def test_no_writable_folder_at_all_turns_the_caches_off(tmp_path, monkeypatch, capsys):
    from refconv.tooling.opencl import _platform
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "afile" / "cache"))
    monkeypatch.delenv("PYOPENCL_NO_CACHE", raising=False)
    monkeypatch.delenv("POCL_KERNEL_CACHE", raising=False)
    monkeypatch.delenv("PYOPENCL_CACHE_FAILURE_FATAL", raising=False)
    monkeypatch.setattr(_platform.tempfile, "gettempdir", lambda: str(tmp_path / "afile" / "tmp"))
    monkeypatch.setattr(_platform.tempfile, "tempdir", str(tmp_path / "afile" / "tmp"))
    _platform._setup_cache()
    assert os.environ["PYOPENCL_NO_CACHE"] == "1" and os.environ["POCL_KERNEL_CACHE"] == "0"
    assert os.environ["PYOPENCL_CACHE_FAILURE_FATAL"] == ""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "are off" in err[0], err


def test_a_writable_cache_folder_is_left_alone(tmp_path, monkeypatch, capsys):
    from refconv.tooling.opencl import _platform
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PYOPENCL_NO_CACHE", raising=False)
    monkeypatch.setenv("PYOPENCL_CACHE_FAILURE_FATAL", "1")       # the user's choice is kept
    _platform._setup_cache()
    assert os.environ["XDG_CACHE_HOME"] == str(tmp_path / "cache") and "PYOPENCL_NO_CACHE" not in os.environ
    assert os.environ["PYOPENCL_CACHE_FAILURE_FATAL"] == "1"
    assert capsys.readouterr().err == ""


def test_the_private_cache_is_never_another_users_folder(tmp_path, monkeypatch):
    from refconv.tooling.opencl import _platform
    monkeypatch.setattr(_platform.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(_platform.tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"refconv-cache-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)                                   # anyone may write: not a cache to load programs from
    got = _platform._private_cache()
    assert got and got != str(shared) and os.path.dirname(got) == str(tmp_path)
    shared.chmod(0o700)
    assert _platform._private_cache() == str(shared)


def test_builds_name_one_include_folder_for_every_installation(tmp_path, monkeypatch):
    """pyopencl's ``-I <venv>/.../pyopencl/cl`` is replaced by a link in the cache folder, so two
    installations (a fresh clone's venv, a pip install) give PoCL and pyopencl the same build
    options, and their binary caches hit."""
    import types
    from refconv.tooling.opencl import _platform
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    seen = []
    for venv in ("venv-a", "venv-b"):
        real = tmp_path / venv / "pyopencl" / "cl"
        real.mkdir(parents=True)
        (real / "pyopencl-complex.h").write_text(f"/* {venv} */")
        fake = types.SimpleNamespace(_DEFAULT_INCLUDE_OPTIONS=["-I", str(real)])
        _platform._stable_include_path(fake)
        seen.append(list(fake._DEFAULT_INCLUDE_OPTIONS))
        assert (Path(fake._DEFAULT_INCLUDE_OPTIONS[1]) / "pyopencl-complex.h").read_text() == f"/* {venv} */"
    assert seen[0] == seen[1] == ["-I", str(tmp_path / "cache" / "refconv" / "pyopencl-include")]


@pytest.mark.parametrize("user", [None, "1"])
def test_pocl_builds_one_generic_work_group_function_unless_the_user_chose(monkeypatch, tmp_path, user):
    from refconv.tooling.opencl import _platform
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path))      # the ICD search is not under test
    if user is None:
        monkeypatch.delenv("POCL_WORK_GROUP_SPECIALIZATION", raising=False)
    else:
        monkeypatch.setenv("POCL_WORK_GROUP_SPECIALIZATION", user)
    monkeypatch.setitem(_platform._state, "icd_done", False)
    _platform._setup_icd()
    assert os.environ["POCL_WORK_GROUP_SPECIALIZATION"] == (user or "0")
