"""The spec layer (``specs/``, imported as ``refconv.specs``) is the ground floor of refconv.

* A module under ``specs/`` imports, at module level, only the standard library, NumPy and
  ``refconv.specs`` modules; at any level (function-local imports included) nothing of
  ``refconv`` outside ``refconv.specs``.  The libraries the peers call (torch, CuPy, OpenCV,
  SciPy) are imported only inside functions.
* The core imports the specs by plain import statements (``refconv.ops`` at module level, no
  ``importlib``), and only the registry reaches the spec modules: the rest of the core reads an
  op through its record.

Read from the source with :mod:`ast`."""
from __future__ import annotations

import ast
import pathlib
import sys

from helpers import ROOT

SPECS, CORE = ROOT / "specs", ROOT / "refconv"
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


def _imports(path: pathlib.Path, package: str, *, module_level: bool) -> list[tuple[int, str]]:
    """``(line, module)`` for each module an import in ``path`` (a module of ``package``) names:
    ``import a.b`` names ``a.b``; ``from a import b`` names ``a`` and ``a.b`` (``b`` may be a
    module).  All imports, or only those that run when the module is imported (not inside
    functions)."""
    out = []

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import) and (inner or not module_level):
                out.extend((child.lineno, a.name) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and (inner or not module_level):
                base = package.split(".")[:len(package.split(".")) - (child.level - 1)] if child.level else []
                mod = ".".join(base + ([child.module] if child.module else []))
                out.extend([(child.lineno, mod)] + [(child.lineno, f"{mod}.{a.name}") for a in child.names])
            visit(child, inner)
    visit(ast.parse(path.read_text(), filename=str(path)), True)
    return out


def _in_specs(mod: str) -> bool:
    return mod == "refconv.specs" or mod.startswith("refconv.specs.")


def _outside_the_ground_floor(path: pathlib.Path) -> list[str]:
    """What a spec module imports that the ground floor may not: any refconv module outside
    ``refconv.specs`` (any level), or at module level anything but the stdlib, NumPy and
    ``refconv.specs`` (one finding per import statement and rule)."""
    bad = {}
    for line, mod in _imports(path, "refconv.specs", module_level=False):
        if (mod == "refconv" or mod.startswith("refconv.")) and not _in_specs(mod):
            bad.setdefault((line, ""), f"{path.name}:{line} imports {mod}")
    for line, mod in _imports(path, "refconv.specs", module_level=True):
        if mod.split(".")[0] not in STDLIB | {"numpy"} and not _in_specs(mod):
            bad.setdefault((line, "top"), f"{path.name}:{line} imports {mod} at module level")
    return [bad[k] for k in sorted(bad)]


def test_no_spec_module_imports_the_core_or_a_library_at_module_level():
    files = sorted(SPECS.glob("*.py"))
    assert {"record.py", "peer.py", "intervals.py", "dotbound.py", "filter2d.py"} <= {f.name for f in files}
    assert [b for f in files for b in _outside_the_ground_floor(f)] == []


def test_the_ground_floor_rule_catches_an_arrow_back_into_the_core(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import numpy as np\nfrom refconv.variant import Range\nfrom . import record\n"
                 "import torch\n\ndef peer():\n    import cupy\n    from refconv import problem\n")
    assert _outside_the_ground_floor(f) == ["bad.py:2 imports refconv.variant",
                                            "bad.py:2 imports refconv.variant at module level",
                                            "bad.py:4 imports torch at module level", "bad.py:8 imports refconv"]


def test_the_core_imports_the_specs_statically_and_only_the_registry_reaches_the_spec_modules():
    ops_src = (CORE / "ops.py").read_text()
    assert "refconv.specs" in [m for _, m in _imports(CORE / "ops.py", "refconv", module_level=True)]
    assert "importlib" not in ops_src and "pkgutil" not in ops_src
    op_modules = {f"refconv.specs.{r.name}" for r in __import__("refconv.specs").specs.RECORDS}
    assert "refconv.specs.filter2d" in op_modules
    reach = {f.name: sorted(m for _, m in _imports(f, "refconv", module_level=False) if m in op_modules)
             for f in sorted(CORE.glob("*.py"))}
    assert {k: v for k, v in reach.items() if v} == {}


def test_the_old_names_stay_importable_for_plugins_and_name_the_spec_layer_s_objects():
    import refconv.oprecord as old
    from refconv import Range as public_range
    from refconv.specs import record
    from refconv.variant import Range
    assert old.OpRecord is record.OpRecord and old.Input is record.Input and old.Directed is record.Directed
    assert old.BenchProblem is record.BenchProblem and Range is public_range is record.Range
