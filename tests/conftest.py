"""Shared fixtures (the helpers are in ``tests/helpers.py``): the test-only plugin packages,
installed into a private directory so that the user's environment never sees the deliberately
wrong variants; and the ``slow`` tier."""
from __future__ import annotations

import pytest
from helpers import ROOT, env_with_path, install_target


@pytest.fixture(scope="session")
def buggy_env(tmp_path_factory):
    """Environment for a subprocess that sees the ``buggy`` plugin (installed into a private
    --target directory put on PYTHONPATH: its entry points are discovered like any plugin's)."""
    return env_with_path(install_target(tmp_path_factory, "buggy_site", ROOT / "tests" / "plugins" / "refconv-buggy"))


@pytest.fixture(scope="session")
def faults_env(tmp_path_factory):
    """Environment for a subprocess that sees the ``faults`` plugin (``tests/plugins/refconv-faults``)."""
    return env_with_path(install_target(tmp_path_factory, "faults_site", ROOT / "tests" / "plugins" / "refconv-faults"))


#: test modules (by file name, in tests/ or tests/meta/) made of ``refconv check`` / pytest
#: subprocess runs: marked ``slow``, so that ``pytest -m "not slow"`` is the fast tier (the
#: README's command runs both)
SLOW_MODULES = {"test_conformance", "test_cli", "test_cli_verdicts", "test_pytest_plugin", "test_checker_catches_bugs",
                "test_runner_faults", "test_shard_merge", "test_sanitizer", "test_sanitizer_opencl",
                "test_compile_check", "test_sim_scheduler", "test_opencl_oclgrind", "test_bench_timing",
                "test_repro_options", "test_third_party_opencl", "test_third_party_cuda"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module is not None and item.module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
