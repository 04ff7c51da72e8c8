"""A non-editable install ships every package: pyproject's ``packages`` lists each folder with an
``__init__.py`` under the four source folders (a package left out works in the editable install
the tests use, and is missing from a wheel)."""
import tomllib

from helpers import ROOT


def test_every_package_folder_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, dirs = set(cfg["packages"]), cfg["package-dir"]
    found = set()
    for name, folder in dirs.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), "packages missing from pyproject.toml's packages"
    assert listed - found == set(), "pyproject.toml lists packages that do not exist"


# ----------------------------------------------------------------------------- the built wheel

import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import zipfile  # noqa: E402

import pytest  # noqa: E402

#: what the wheel is built from: the four source folders and the project files, and beside them the
#: parts of the tree that must stay out of it (the lab, the docs, the scripts, the tests)
_COPIED = ("pyproject.toml", "README.md", "refconv", "specs", "tooling", "backends",
           "lab", "docs", "scripts", "tests")


@pytest.fixture(scope="module")
def wheel_members(tmp_path_factory) -> list[str]:
    """The member names of the wheel ``pip wheel`` builds from a copy of the working tree (built
    in the copy, so no build/ or egg-info lands in the checkout)."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", ".hypothesis")
    for name in _COPIED:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=ignore)
        elif p.exists():
            shutil.copy2(p, src / name)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                        "-q", "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("refconv-*.whl")
    with zipfile.ZipFile(whl) as z:
        return z.namelist()


def test_the_wheel_holds_the_product(wheel_members):
    names = set(wheel_members)
    for path in ("refconv/cli.py", "refconv/specs/__init__.py", "refconv/tooling/cuda/__init__.py",
                 "refconv/backends/opencl/filter2d_best.cl", "refconv/backends/numba_cuda/filter2d_best.py"):
        assert path in names, f"{path} missing from the wheel"


def test_the_wheel_holds_no_lab_docs_data_or_gpu_runners(wheel_members):
    """Only the ``refconv`` package and its dist-info: no ``lab/`` (probes, sweeps, runs and their
    data), no ``docs/data``, no ``scripts/`` and no GPU runner, probe or sweep under any name."""
    outside = [n for n in wheel_members if not n.startswith(("refconv/", "refconv-"))]
    assert outside == [], f"files outside the refconv package: {outside[:10]}"
    lab_like = [n for n in wheel_members
                if any(part in ("lab", "scripts", "data", "runs", "docs") for part in n.split("/")[:-1])
                or n.rsplit("/", 1)[-1].startswith("gpu_") or n.endswith(("_probe.py", "_sweep.py", ".sh"))]
    assert lab_like == [], f"lab or data files in the wheel: {lab_like[:10]}"

