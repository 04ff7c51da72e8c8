"""The README's pytest commands, as written, exit 0 inside the repository (where the repository's
own ``tests/conftest.py`` sees the refconv items next to its own) and from an empty folder."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

#: the README's pytest commands; the numba_cuda one compiles every kernel for the GPU (minutes,
#: covered by the compile-check tests), so here it only collects
COMMANDS = (["--refconv", "--refconv-backend", "example", "-m", "refconv", "-n", "2"],
            ["refconv::matvec/example/numpy_rows"],
            ["--refconv", "--refconv-backend", "numba_cuda", "--refconv-sanitize", "--refconv-compile", "-m", "refconv",
             "-n", "2", "--collect-only", "-q"])


def _clean_env() -> dict:
    """This process's environment without the outer pytest(-xdist) run's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COLUMNS", "LINES"))}
    env["REFCONV_DATABASE"] = "none"
    return env


@pytest.mark.parametrize("where", ["repository", "empty folder"])
@pytest.mark.parametrize("args", COMMANDS, ids=["example-n2", "node-id", "numba-cuda-collected"])
def test_readme_pytest_command_exits_0(where, args, tmp_path):
    cwd = ROOT if where == "repository" else tmp_path
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, env=_clean_env(),
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert "INTERNALERROR" not in out
    last = out.strip().splitlines()[-1]
    assert (" collected" in last or "tests collected" in last) if "--collect-only" in args else " passed" in last, last
