"""The lab's scripts (``lab/``: GPU runners, probes, sweeps and the runners kept beside each run's
data) are run by hand, mostly on a lent GPU machine where a syntax error costs device time: each
Python script must compile and each shell script must pass ``bash -n``.  ``scripts/install.sh``, the
one product script, is checked the same way."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab"
PY = sorted(LAB.rglob("*.py"))
SH = sorted([*LAB.rglob("*.sh"), *(ROOT / "scripts").glob("*.sh")])


def _id(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", PY, ids=_id)
def test_python_script_compiles(path):
    compile(path.read_text(), str(path), "exec")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("path", SH, ids=_id)
def test_shell_script_parses(path):
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_there_are_scripts_to_check_in_each_part_of_the_lab():
    for part in ("probes", "sweeps", "runners"):
        assert list((LAB / part).glob("*.py")) or list((LAB / part).glob("*.sh")), f"lab/{part} has no scripts"
    assert len(PY) >= 5 and len(SH) >= 5 and ROOT / "scripts" / "install.sh" in SH


def test_scripts_holds_only_the_install_script():
    """GPU runners, probes and sweeps live in lab/, not in scripts/ (the product's own helpers)."""
    assert sorted(p.name for p in (ROOT / "scripts").iterdir()) == ["install.sh"]
