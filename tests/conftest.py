"""Shared fixtures: installing the test-only plugin packages into a private directory so that the
user's environment never sees the deliberately wrong variants."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _install_target(tmp_path_factory, name: str, src: Path) -> Path:
    target = tmp_path_factory.mktemp(name)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(src)],
                   check=True, capture_output=True, text=True)
    return target


@pytest.fixture(scope="session")
def buggy_env(tmp_path_factory):
    """Environment for a subprocess that sees the ``buggy`` plugin (installed into a private
    --target directory put on PYTHONPATH: its entry points are discovered like any plugin's)."""
    target = _install_target(tmp_path_factory, "buggy_site", ROOT / "tests" / "plugins" / "refconv-buggy")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["REFCONV_DATABASE"] = "none"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def refconv_cli(*args, env=None, cwd=None, timeout=600):
    """Run the ``refconv`` command of this interpreter's environment."""
    return subprocess.run([sys.executable, "-m", "refconv", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


#: test modules made of ``refconv check`` / pytest subprocess runs: marked ``slow``, so that
#: ``pytest -m "not slow"`` is the fast tier (the README's command runs both)
SLOW_MODULES = {"test_conformance", "test_cli", "test_cli_verdicts", "test_pytest_plugin", "test_checker_catches_bugs",
                "test_runner_faults", "test_shard_merge", "test_sanitizer", "test_sanitizer_opencl",
                "test_compile_check", "test_sim_scheduler", "test_opencl_oclgrind", "test_bench_timing",
                "test_third_party_cuda"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module is not None and item.module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
