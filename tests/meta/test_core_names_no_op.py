"""No core module (under ``refconv/``) names a built-in op in code: every per-op fact is in the op's
record next to its spec (``specs/<op>.py``), so adding an op touches no core module.  Names
(identifiers, attributes, definitions) and string constants count; docstrings and comments do not
(they may give a built-in op as an example).  Read from the source with :mod:`ast`."""
from __future__ import annotations

import ast
import re

from helpers import ROOT

from refconv import specs

BUILT_IN = tuple(r.name for r in specs.RECORDS)
WORD = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, BUILT_IN)) + r")(?![A-Za-z0-9])")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (of the module, a class, a function) or
    attribute docstrings (a bare string statement)."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def op_names_in_code(source: str, filename: str = "<src>") -> list[str]:
    """``file:line: text`` for each name or non-docstring string of ``source`` that names a built-in op."""
    tree = ast.parse(source, filename=filename)
    docs, found = _docstrings(tree), []
    for n in ast.walk(tree):
        text = (n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
                else n.id if isinstance(n, ast.Name)
                else n.attr if isinstance(n, ast.Attribute)
                else n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                else n.arg if isinstance(n, ast.arg) else None)
        if text is not None and WORD.search(text):
            found.append((n.lineno, f"{filename}:{n.lineno}: {text[:60]!r}"))
    return [hit for _, hit in sorted(found)]


def test_no_core_module_names_a_built_in_op_in_code():
    files = sorted((ROOT / "refconv").rglob("*.py"))
    assert len(BUILT_IN) >= 5 and any(f.name == "peers.py" for f in files)
    assert [hit for f in files for hit in op_names_in_code(f.read_text(), str(f.relative_to(ROOT)))] == []


def test_the_finder_sees_strings_names_and_attributes_but_not_docstrings_or_comments():
    src = ('"""About filter2d."""\n'
           'X = "kron"            # matvec in a comment\n'
           'def f(sobel_size):\n    """conv2d here is prose."""\n    return sobel_size\n'
           'y = ops.get("a").matvec_rows\n'
           'z = "filter2dx"\n')
    assert op_names_in_code(src, "m.py") == ["m.py:2: 'kron'", "m.py:3: 'sobel_size'",
                                             "m.py:5: 'sobel_size'", "m.py:6: 'matvec_rows'"]
