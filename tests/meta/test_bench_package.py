"""The bench package's shape: small functions, and the command line stays outside (the options
arrive as one typed object; only ``refconv.bench.args`` knows argparse)."""
import ast
from pathlib import Path

import refconv.bench

PACKAGE = Path(refconv.bench.__file__).parent
MAX_LINES = 80


def _trees():
    return [(p, ast.parse(p.read_text())) for p in sorted(PACKAGE.glob("*.py"))]


def test_the_package_has_its_modules():
    assert {p.stem for p, _ in _trees()} >= {"options", "args", "command", "problems", "row", "rows", "worker", "report"}


def test_no_function_of_the_bench_is_longer_than_80_lines():
    long = [f"{p.name}:{n.name} ({n.end_lineno - n.lineno + 1} lines)" for p, t in _trees() for n in ast.walk(t)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > MAX_LINES]
    assert long == []


def test_no_argparse_namespace_enters_the_bench():
    found = []
    for p, t in _trees():
        for n in ast.walk(t):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                found += [f"{p.name}:{getattr(n, 'name', 'lambda')}({a.arg})" for a in n.args.args + n.args.kwonlyargs
                          if a.arg in ("ns", "namespace", "args")]
            elif isinstance(n, (ast.Import, ast.ImportFrom)) and p.name != "args.py":
                names = [a.name for a in n.names] + [getattr(n, "module", None) or ""]
                found += [f"{p.name}: imports argparse" for x in names if x.split(".")[0] == "argparse"]
    assert found == []
