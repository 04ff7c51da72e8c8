"""No function of the engine, the specs or the kernel tooling is longer than 80 lines.

Rule: a function's length is counted from its ``def`` line to its last line (decorators not
counted, the docstring and comments counted), read with :mod:`ast`; a nested function counts
on its own and as part of the function around it.  The folders: ``refconv/`` (the engine),
``specs/`` (the reference specs) and ``tooling/`` (the kernel tooling, where it exists).
Kernels under ``backends/`` are exempt: a kernel body is one unit of device code.
"""
from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT

MAX_LINES = 80
FOLDERS = ("refconv", "specs", "tooling")


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(qualified name, first line, length)`` of every function in ``source`` longer than
    ``max_lines`` (from ``def`` to its last line)."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                length = child.end_lineno - child.lineno + 1
                if length > max_lines:
                    out.append((name, child.lineno, length))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _python_files():
    for folder in FOLDERS:
        base = ROOT / folder
        if base.is_dir():
            yield from sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_function_of_the_engine_specs_or_tooling_is_longer_than_80_lines():
    too_long = [f"{path.relative_to(ROOT)}:{line} {name} ({n} lines)"
                for path in _python_files()
                for name, line, n in long_functions(path.read_text(encoding="utf-8"))]
    assert not too_long, f"functions longer than {MAX_LINES} lines (split them):\n" + "\n".join(too_long)


def test_the_length_counts_from_def_to_the_last_line_without_decorators():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES - 1))   # def + 79 lines: exactly 80
    source = f"@decorator\n@other\ndef fits():\n{body}\n\n\ndef over():\n{body}\n    return 1\n"
    assert long_functions(source) == [("over", MAX_LINES + 5, MAX_LINES + 1)]


def test_nested_functions_and_methods_are_named_and_counted_on_their_own():
    inner = "\n".join(f"            y{i} = {i}" for i in range(MAX_LINES))
    source = f"class Box:\n    def method(self):\n        def helper():\n{inner}\n        return helper\n"
    found = {name: n for name, _, n in long_functions(source)}
    assert found == {"Box.method.helper": MAX_LINES + 1, "Box.method": MAX_LINES + 3}


def test_the_scan_reads_the_engine_and_the_specs():
    names = {p.relative_to(ROOT).parts[0] for p in _python_files()}
    assert {"refconv", "specs"} <= names
    assert Path(ROOT / "refconv" / "cli.py") in set(_python_files())
