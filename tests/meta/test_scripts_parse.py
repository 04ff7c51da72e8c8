"""The maintenance scripts (``scripts/``: GPU runs, sweeps, probes, catch rates) are run by hand,
mostly on a lent GPU machine where a syntax error costs device time: each Python script must
compile and each shell script must pass ``bash -n``."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.py")), ids=lambda p: p.name)
def test_python_script_compiles(path):
    compile(path.read_text(), str(path), "exec")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.sh")), ids=lambda p: p.name)
def test_shell_script_parses(path):
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_there_are_scripts_to_check():
    assert len(list(SCRIPTS.glob("*.py"))) >= 5 and len(list(SCRIPTS.glob("*.sh"))) >= 5
