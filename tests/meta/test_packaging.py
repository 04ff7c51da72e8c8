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
