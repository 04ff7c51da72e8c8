"""The core (refconv/) and the specs (specs/, imported as refconv.specs): no module-level import
cycle between them, and the core reaches the specs only through the op records
(:mod:`refconv.ops` finds them; nothing else in the core imports a spec module)."""
import ast
import pathlib

import refconv

ROOT = pathlib.Path(refconv.__file__).resolve().parent.parent
PACKAGES = {"refconv": ROOT / "refconv", "refconv.specs": ROOT / "specs"}


def _modules() -> dict:
    mods = {}
    for pkg, folder in PACKAGES.items():
        for f in sorted(folder.glob("*.py")):
            name = pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"
            mods[name] = f
    return mods


def _is_package(name: str, mods: dict) -> bool:
    return mods[name].stem == "__init__"


def _imports(name: str, path: pathlib.Path, mods: dict, *, module_level: bool) -> set:
    """Modules of ``mods`` that ``name`` imports (only those run at import when ``module_level``)."""
    tree = ast.parse(path.read_text())
    base = name if _is_package(name, mods) else name.rpartition(".")[0]
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if module_level and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = base.split(".")
                    parent = ".".join(parts[:len(parts) - child.level + 1])
                    target = f"{parent}.{child.module}" if child.module else parent
                else:
                    target = child.module
                found.add(target)
                found.update(f"{target}.{a.name}" for a in child.names)
            visit(child)
    visit(tree)
    out = set()
    for t in found:
        # the imported module and the packages it lives in (run first), but not our own packages
        parts = t.split(".")
        for k in range(1, len(parts) + 1):
            m = ".".join(parts[:k])
            if m in mods and m != name and not name.startswith(m + "."):
                out.add(m)
    return out


def _cycle(graph: dict):
    state, stack = {}, []

    def dfs(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                c = dfs(v)
                if c:
                    return c
        state[u] = 2
        stack.pop()
        return None

    for u in sorted(graph):
        if u not in state:
            c = dfs(u)
            if c:
                return c
    return None


def test_the_module_level_import_graph_of_the_core_and_the_specs_has_no_cycle():
    mods = _modules()
    assert "refconv.problem" in mods and "refconv.specs.filter2d" in mods and "refconv.oprecord" in mods
    graph = {m: _imports(m, p, mods, module_level=True) for m, p in mods.items()}
    assert "refconv.oprecord" in graph["refconv.specs.filter2d"]          # the graph is read at all
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_core_reaches_the_specs_only_through_the_op_records():
    mods = _modules()
    # refconv/__init__ offers ``refconv.specs`` to users (a lazy attribute); refconv.ops finds the records
    allowed = {"refconv", "refconv.ops"}
    reach = {m: sorted(t for t in _imports(m, p, mods, module_level=False) if t.startswith("refconv.specs"))
             for m, p in mods.items() if not m.startswith("refconv.specs")}
    assert {m: t for m, t in reach.items() if t and m not in allowed} == {}
    # and the ops registry imports them only dynamically, at first use
    assert not [t for t in _imports("refconv.ops", mods["refconv.ops"], mods, module_level=True)
                if t.startswith("refconv.specs")]
