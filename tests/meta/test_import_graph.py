"""The import graph of refconv's own modules, read from the source with :mod:`ast`, and the layers
it must respect.  Four folders form one namespace (pyproject's package-dir): ``specs/`` as
``refconv.specs``, ``refconv/`` (the core, and the public facades ``refconv.cuda``,
``refconv.opencl``, ``refconv.triton``), ``tooling/`` as ``refconv.tooling`` and ``backends/`` as
``refconv.backends``.

* no import cycle, neither among the module-level imports (those that run when the module is
  imported: statements at module level, in ``if``/``try``/``with`` blocks and class bodies there;
  not in functions, not under ``if TYPE_CHECKING:``) nor with function-local imports included;
* the layers, every import counted (function-local ones included), from the bottom:
  specs import nothing of refconv outside ``refconv.specs``; the core imports the core and the
  specs; tooling imports tooling, the core and the specs; a backend imports its own package,
  the shared host modules beside the backend packages (``backends/<name>.py``), the facades,
  tooling, the core and the specs (never another backend); the facades import only tooling;
  so nothing under ``refconv/`` imports ``refconv.backends``;
* the core's source -- code, strings, comments -- names no built-in backend, none of its options,
  environment variables, packages or tools (the names are read from the backends'
  declarations, plus the tools they drive); no module is exempt;
* only ``refconv/__main__.py`` imports the command line (``refconv.cli``);
* one kit shape: each kernel kit's public face is its package ``refconv.tooling.<lang>`` (with
  ``backend_fields()``), each facade ``refconv.<lang>`` re-exports it and imports nothing else,
  and no module outside a tooling package imports that package's private (``_``-prefixed)
  modules, at any level -- the built-in backends use the public kit, as plugins do;
* no product module (core, specs, tooling, backends) imports ``lab`` (the lab wing, not
  installed).
* the specs (``refconv.specs``) are the ground floor: they import no refconv module outside
  ``refconv.specs``, at any level, and the op registry imports them at module level
  (``tests/meta/test_spec_imports.py`` checks their other imports).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

#: package name -> source folder (pyproject's package-dir)
FOLDERS = {"refconv": ROOT / "refconv", "refconv.specs": ROOT / "specs", "refconv.tooling": ROOT / "tooling",
           "refconv.backends": ROOT / "backends"}


def _modules() -> dict[str, Path]:
    """Every module of the three folders by its import name (a package by its own name)."""
    out = {}
    for pkg, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((pkg,) + rel)
            if pkg == "refconv" and rel and rel[0] in ("specs", "tooling", "backends"):
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
    assert {"refconv.cli", "refconv.session", "refconv.case", "refconv.specs.matvec", "refconv.tooling.cuda._env",
            "refconv.tooling.opencl", "refconv.tooling.triton.kit", "refconv.backends.opencl"} <= set(g)
    assert "refconv.variant" in g["refconv"] and "refconv.specs.matvec" in g["refconv.specs"]
    assert "refconv.session" in g["refconv.cli"] and "refconv.console" in g["refconv.bench.command"]
    assert "refconv.tooling.cuda" in g["refconv.backends.numba_cuda"]
    assert g["refconv.cuda"] == {"refconv.tooling.cuda"} and "refconv.tooling.cuda._env" in g["refconv.tooling.cuda"]


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


#: the public kernel tooling for plugins (docs/plugins.md): re-exports of refconv.tooling.*
FACADES = {"refconv.cuda", "refconv.opencl", "refconv.triton"}


def layer(module: str) -> str:
    """``specs``, ``core``, ``facade``, ``tooling`` or ``backend:<name>``: where a module lives."""
    parts = module.split(".")
    if module in FACADES:
        return "facade"
    if len(parts) > 1 and parts[1] == "specs":
        return "specs"
    if len(parts) > 1 and parts[1] == "tooling":
        return "tooling"
    if len(parts) > 1 and parts[1] == "backends":
        if len(parts) > 2 and (ROOT / "backends" / f"{parts[2]}.py").is_file():
            return "shared"   # a plain module beside the backend packages: host code two backends share
        return "backend:" + (parts[2] if len(parts) > 2 else "")
    return "core"


#: the layers each layer may import (besides its own; a backend: its own package only)
ALLOWED = {"specs": set(), "core": {"specs"}, "tooling": {"core", "specs"}, "facade": {"tooling"},
           "shared": {"tooling", "facade", "core", "specs"},
           "backend": {"shared", "tooling", "facade", "core", "specs"}}


def layer_violations(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """``{module: [imported modules it may not import]}`` under :data:`ALLOWED`."""
    bad = {}
    for m, targets in graph.items():
        own = layer(m)
        kind = own.split(":")[0]
        wrong = sorted(t for t in targets if layer(t) != own and layer(t) not in ALLOWED[kind])
        if wrong:
            bad[m] = wrong
    return bad


def test_every_module_has_a_layer_and_every_layer_has_modules():
    found = {layer(m).split(":")[0] for m in MODULES}
    assert found <= set(ALLOWED) and found >= set(ALLOWED) - {"shared"}
    assert {layer(m) for m in MODULES if m.startswith("refconv.backends.")} >= {
        "backend:numba_cuda", "backend:opencl", "backend:triton"}


def test_the_layer_check_finds_an_arrow_pointing_up():
    graph = {"refconv.specs.x": {"refconv.variant"}, "refconv.session": {"refconv.backends.opencl"},
             "refconv.tooling.cuda._env": {"refconv.backends.numba_cuda", "refconv.variant"},
             "refconv.cuda": {"refconv.tooling.cuda._env", "refconv.registry"},
             "refconv.backends.opencl.kron": {"refconv.backends.triton", "refconv.backends.opencl.matvec",
                                              "refconv.tooling.opencl"},
             "refconv.backends.triton": {"refconv.tooling.triton.kit", "refconv.specs.x", "refconv.variant"}}
    assert layer_violations(graph) == {
        "refconv.specs.x": ["refconv.variant"], "refconv.session": ["refconv.backends.opencl"],
        "refconv.tooling.cuda._env": ["refconv.backends.numba_cuda"], "refconv.cuda": ["refconv.registry"],
        "refconv.backends.opencl.kron": ["refconv.backends.triton"]}


def test_the_specs_import_nothing_of_refconv_outside_the_specs():
    bad = layer_violations(import_graph(top_level_only=False))
    assert {m: t for m, t in bad.items() if layer(m) == "specs"} == {}


def test_core_tooling_facades_and_backends_import_only_the_layers_below():
    bad = layer_violations(import_graph(top_level_only=False))
    assert {m: t for m, t in bad.items() if layer(m) != "specs"} == {}


def test_nothing_under_refconv_imports_a_backend():
    g = import_graph(top_level_only=False)
    under = [m for m in MODULES if layer(m) in ("core", "facade")]
    assert "refconv.cli" in under and "refconv.cuda" in under
    assert {m: sorted(t for t in g[m] if t.startswith("refconv.backends")) for m in under
            if any(t.startswith("refconv.backends") for t in g[m])} == {}


# ----------------------------------------------------------------------------- names in the core

#: the tools the built-in backends drive, named in no backend declaration
TOOL_NAMES = ("pocl", "oclgrind", "nvvm", "ptxas", "libdevice", "compute-sanitizer", "cuda simulator",
              "cudasim", "TRITON_INTERPRET")


def _builtin_backends() -> list:
    """The ``Backend`` objects of refconv's own entry points (pyproject), not the installed plugins."""
    import importlib
    import tomllib
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["refconv.backends"]
    out = []
    for value in eps.values():
        mod, _, attr = value.partition(":")
        out.append(getattr(importlib.import_module(mod), attr))
    return out


def backend_words(backends) -> set[str]:
    """What names a backend: its name, its options' flags and environment variables, the modules
    of its ``versions``, its ``env_prefixes`` (``REFCONV_`` aside: the core's own)."""
    words = set()
    for b in backends:
        words.add(b.name)
        for o in b.options:
            words.add(o.flag)
            if o.env:
                words.add(o.env)
        words.update(b.versions)
        words.update(p for p in b.env_prefixes if p != "REFCONV_")
    return words


def named(text: str, words) -> list[str]:
    """The words of ``words`` that occur in ``text``, case-insensitively, not inside a longer word
    (a letter on either side; ``_`` and ``-`` do not extend a word: ``numba`` is in ``numba_cuda``)."""
    import re
    return sorted(w for w in words
                  if re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![a-z])", text, flags=re.IGNORECASE))


def test_the_name_scan_finds_a_backend_named_in_a_string_or_comment():
    words = {"numba", "--opencl", "OCL", "pocl"}
    assert named('x = "runs on numba_cuda"', words) == ["numba"]
    assert named("# pass --opencl nvidia\nPOCL_DEBUG=1", words) == ["--opencl", "pocl"]
    assert named("OCL_ICD_VENDORS", words) == ["OCL"]
    assert named("protocol, Numbat", words) == []


def test_the_core_names_no_backend_in_code_or_strings():
    builtins = _builtin_backends()
    words = backend_words(builtins) | set(TOOL_NAMES)
    assert {"numba_cuda", "opencl", "triton", "numba", "pyopencl", "REFCONV_CUDA", "--cuda", "OCL"} <= words
    core = {m: p for m, p in MODULES.items() if layer(m) == "core"}
    assert "refconv.cli" in core and "refconv.procs" in core and "refconv.cuda" not in core
    found = {m: named(p.read_text(), words) for m, p in core.items()}
    assert {m: w for m, w in found.items() if w} == {}


def test_only_main_imports_the_command_line():
    g = import_graph(top_level_only=False)
    assert sorted(m for m, ts in g.items() if "refconv.cli" in ts) == ["refconv.__main__"]


def test_the_specs_import_only_the_specs_and_the_registry_imports_them_statically():
    g = import_graph(top_level_only=False)
    specs = [m for m in MODULES if m == "refconv.specs" or m.startswith("refconv.specs.")]
    assert "refconv.specs.record" in specs and "refconv.specs.record" in g["refconv.specs.filter2d"]
    bad = {m: sorted(t for t in g[m] if not t.startswith("refconv.specs")) for m in specs}
    assert {m: t for m, t in bad.items() if t} == {}
    assert "refconv.specs" in import_graph()["refconv.ops"]


# ----------------------------------------------------------------------------- one kit shape

#: the kernel kits: ``refconv.tooling.<lang>``, each re-exported as ``refconv.<lang>``
KITS = ("cuda", "opencl", "triton")


def _tooling_package(module: str) -> str | None:
    """``refconv.tooling.<lang>`` for a module inside that package, else None."""
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) >= 3 and parts[:2] == ["refconv", "tooling"] else None


def private_imports(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """``{module: [private modules of a tooling package it is outside of]}``: a module of
    ``refconv.tooling.<lang>`` whose path below the package has a ``_``-prefixed part is private
    to that package."""
    bad = {}
    for m, targets in graph.items():
        wrong = sorted(t for t in targets if _tooling_package(t) and _tooling_package(m) != _tooling_package(t)
                       and any(p.startswith("_") for p in t.split(".")[3:]))
        if wrong:
            bad[m] = wrong
    return bad


def test_the_private_import_check_finds_a_back_door():
    graph = {"refconv.backends.numba_cuda.kron": {"refconv.tooling.cuda._env", "refconv.tooling.cuda"},
             "refconv.tooling.cuda.preflight": {"refconv.tooling.cuda._env"},          # inside: fine
             "refconv.tooling.cuda.compile_check._pool": {"refconv.tooling.cuda._common"},
             "refconv.tooling.triton.kit": {"refconv.tooling.cuda._env"},              # another kit's
             "refconv.backends.triton": {"refconv.tooling.triton.kit", "refconv.tooling.triton"},
             "refconv.backends.x": {"refconv.tooling.cuda.sanitizer._core"}}
    assert private_imports(graph) == {"refconv.backends.numba_cuda.kron": ["refconv.tooling.cuda._env"],
                                      "refconv.tooling.triton.kit": ["refconv.tooling.cuda._env"],
                                      "refconv.backends.x": ["refconv.tooling.cuda.sanitizer._core"]}


def test_no_module_outside_a_tooling_package_imports_its_private_modules():
    g = import_graph(top_level_only=False)
    assert "refconv.tooling.cuda._env" in g["refconv.tooling.cuda"]       # the check sees the package's own
    assert private_imports(g) == {}


@pytest.mark.parametrize("lang", KITS)
def test_each_kit_is_its_tooling_package_with_backend_fields_and_a_re_exporting_facade(lang):
    import importlib
    facade, kit = importlib.import_module(f"refconv.{lang}"), importlib.import_module(f"refconv.tooling.{lang}")
    assert "backend_fields" in kit.__all__ and list(facade.__all__) == list(kit.__all__)
    assert all(getattr(facade, n) is getattr(kit, n) for n in kit.__all__)
    assert import_graph(top_level_only=False)[f"refconv.{lang}"] == {f"refconv.tooling.{lang}"}
    code = [n for n in ast.parse(MODULES[f"refconv.{lang}"].read_text()).body
            if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]      # the docstring aside
    assert len(code) == 2 and all(isinstance(n, ast.ImportFrom) for n in code)
    fields = kit.backend_fields()
    assert fields["options"] and callable(fields["configure"]) and callable(fields["available"])


# ----------------------------------------------------------------------------- the lab wing

def _lab_imports(path: Path) -> list[str]:
    """The imports of ``lab`` (a top-level package or module of that name) in one source file."""
    found = []
    for n in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = [a.name for a in n.names] if isinstance(n, ast.Import) else (
            [n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level else [])
        found += [x for x in names if x == "lab" or x.startswith("lab.")]
    return found


def test_the_lab_import_check_finds_one(tmp_path):
    (tmp_path / "m.py").write_text("import os\nfrom lab.runs import x\ndef f():\n    import lab\nimport label\n")
    assert _lab_imports(tmp_path / "m.py") == ["lab.runs", "lab"]


def test_no_product_module_imports_the_lab():
    assert len(MODULES) > 100
    found = {m: _lab_imports(p) for m, p in MODULES.items()}
    assert {m: f for m, f in found.items() if f} == {}
