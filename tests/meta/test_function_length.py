"""No function of the kernel tooling (``tooling/``) is longer than 80 lines (issue 26): long
functions there were factories of nested classes and closures, split into one job each."""
import ast

from helpers import ROOT

LIMIT = 80


def long_functions(folder) -> list[str]:
    """``path:line name (n lines)`` for every function (nested ones included) over :data:`LIMIT`."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = n.end_lineno - n.lineno + 1
                if length > LIMIT:
                    out.append(f"{path.relative_to(folder)}:{n.lineno} {n.name} ({length} lines)")
    return out


def test_the_length_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    assert [s.split()[1] for s in long_functions(tmp_path)] == ["long"]


def test_no_tooling_function_is_longer_than_80_lines():
    assert long_functions(ROOT / "tooling") == []
