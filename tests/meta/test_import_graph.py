"""The import graph of refconv's own modules (``refconv/``, ``specs/`` as ``refconv.specs``,
``backends/`` as ``refconv.backends``), read from the source with :mod:`ast`:

* the module-level imports (those that run when the module is imported: statements at module
  level, in ``if``/``try``/``with`` blocks and class bodies there; not in functions, not under
  ``if TYPE_CHECKING:``) form no cycle, and neither do all imports, function-local ones
  included;
* the core (``refconv/*.py``) names no specific backend package (``refconv.backends.<name>``),
  at any level, function-local imports included: backends are found through their entry points;
* only ``refconv/__main__.py`` imports the command line (``refconv.cli``): the session, the
  console and the reports are modules of their own.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

#: package name -> source folder (pyproject's package-dir)
FOLDERS = {"refconv": ROOT / "refconv", "refconv.specs": ROOT / "specs", "refconv.backends": ROOT / "backends"}


def _modules() -> dict[str, Path]:
    """Every module of the three folders by its import name (a package by its own name)."""
    out = {}
    for pkg, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((pkg,) + rel)
            if pkg == "refconv" and rel and rel[0] in ("specs", "backends"):
                continue   # not there in this layout; the folders above are the packages
            out[name] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.Module, top_level_only: bool):
    """The ``import`` / ``from ... import`` nodes of a module: those run at import time
    (``top_level_only``), or all of them."""
    if not top_level_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
        return
    stack = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            yield n
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue   # runs when called, not when the module is imported
        elif isinstance(n, ast.If) and _is_type_checking(n.test):
            stack.extend(n.orelse)
        elif isinstance(n, (ast.If, ast.Try, ast.With, ast.ClassDef, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(n, field, []) or [])
        elif isinstance(n, ast.ExceptHandler):
            stack.extend(n.body)
        elif hasattr(ast, "TryStar") and isinstance(n, ast.TryStar):
            stack.extend(n.body + n.orelse + n.finalbody + n.handlers)


def _targets(module: str, path: Path, node) -> set[str]:
    """The refconv modules an import node imports."""
    is_pkg = path.name == "__init__.py"
    found = set()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        subs = [f"{prefix}.{a.name}" for a in node.names if f"{prefix}.{a.name}" in MODULES]
        # ``from pkg import sub`` imports the module ``sub`` (pkg is already there: it is imported
        # before any of its modules); a name that is not a module comes from ``pkg`` itself
        names = subs + ([prefix] if len(subs) < len(node.names) else [])
    for name in names:
        # ``import a.b.c`` / ``from a.b import c``: the deepest refconv module named
        parts = name.split(".")
        while parts and ".".join(parts) not in MODULES:
            parts.pop()
        if parts:
            found.add(".".join(parts))
    found.discard(module)
    return found


def import_graph(top_level_only: bool = True) -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = set().union(*[_targets(name, path, n) for n in _import_nodes(tree, top_level_only)])
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_graph_is_read_from_every_module():
    g = import_graph()
    assert {"refconv.cli", "refconv.session", "refconv.case", "refconv.specs.matvec",
            "refconv.tooling.cuda._env", "refconv.backends.opencl"} <= set(g)
    assert "refconv.variant" in g["refconv"] and "refconv.specs.matvec" in g["refconv.specs"]
    assert "refconv.session" in g["refconv.cli"] and "refconv.console" in g["refconv.bench"]
    assert "refconv.tooling.cuda._env" in g["refconv.backends.numba_cuda"]   # from . import _common, _env


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_local_imports_do_not_count_but_type_checking_and_class_bodies_are_handled(tmp_path):
    src = ("import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import refconv.cli\n"
           "try:\n    from refconv import registry\nexcept ImportError:\n    pass\n"
           "class A:\n    from refconv import session\n"
           "def f():\n    from refconv import bench\n")
    tree = ast.parse(src)
    top = set().union(*[_targets("refconv.x", tmp_path / "x.py", n) for n in _import_nodes(tree, True)])
    every = set().union(*[_targets("refconv.x", tmp_path / "x.py", n) for n in _import_nodes(tree, False)])
    assert top == {"refconv.registry", "refconv.session"}
    assert every == {"refconv.registry", "refconv.session", "refconv.bench", "refconv.cli"}


def test_module_level_imports_form_no_cycle():
    found = cycles(import_graph())
    assert found == [], f"import cycles: {found}"


def test_no_cycle_through_function_local_imports_either():
    found = cycles(import_graph(top_level_only=False))
    assert found == [], f"import cycles (function-local imports included): {found}"


def _backend_packages() -> set[str]:
    return {m for m in MODULES if m.startswith("refconv.backends.") and m.count(".") == 2}


#: the public kernel tooling for plugins (docs/plugins.md): re-exports of a backend's tooling
#: module, imported by plugins and backends, never by the engine
TOOLING = {"refconv.cuda", "refconv.opencl"}


def test_the_core_names_no_backend():
    core = [m for m in MODULES if m == "refconv" or (m.startswith("refconv.") and m.split(".")[1]
                                                      not in ("backends", "specs") and m not in TOOLING)]
    assert "refconv.cli" in core and len(_backend_packages()) >= 3
    g = import_graph(top_level_only=False)
    bad = {m: sorted(t for t in g[m] if t.startswith("refconv.backends.") or t in TOOLING) for m in core}
    assert {m: t for m, t in bad.items() if t} == {}


def test_the_tooling_modules_only_re_export_one_backend_tooling_module():
    g = import_graph(top_level_only=False)
    for m in TOOLING & set(MODULES):
        assert all(t.startswith("refconv.backends.") for t in g[m]), (m, g[m])


def test_only_main_imports_the_command_line():
    g = import_graph(top_level_only=False)
    assert sorted(m for m, ts in g.items() if "refconv.cli" in ts) == ["refconv.__main__"]
