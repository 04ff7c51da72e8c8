"""Product code says what it does and why; measurements live in docs/performance.md's current-best
table and the round-by-round story in lab/runs/.  So no comment or docstring of the product
(``refconv/``, ``specs/``, ``tooling/``, ``backends/``) holds a date or a microsecond timing.
Only comments and docstrings are read (with :mod:`tokenize`), so code and ordinary strings, such as
a message naming a unit, are free to say ``us``."""
from __future__ import annotations

import io
import re
import token
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("refconv", "specs", "tooling", "backends")

#: ``2026-…`` or any ISO date
DATE = re.compile(r"\b2026-|\b20\d\d-\d\d-\d\d\b")
#: a number of microseconds: ``12.4 µs``, ``8us``, ``6.7 / 5.3 / 6.6 µs``
MICROSECONDS = re.compile(r"\d+(?:\.\d+)? ?(?:µs|us)\b")


#: the product's kernel sources in C-like languages, read for ``//`` and ``/* */`` comments
C_LIKE = ("*.cl", "*.cu", "*.h", "*.c")
C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def product_files() -> list[Path]:
    """Every Python and kernel source file of the product (the packages the wheel ships)."""
    out = []
    for top in PRODUCT:
        real = (ROOT / top).resolve()
        for pattern in ("*.py", *C_LIKE):
            out += [p for p in sorted(real.rglob(pattern)) if "__pycache__" not in p.parts]
    return out


def c_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment of a C-like kernel source."""
    return [(source.count("\n", 0, m.start()) + 1, m.group()) for m in C_COMMENT.finditer(source)]


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment and each docstring in ``source``: a docstring is taken as a
    statement that is a string alone (the first of a module, class or function body, or a string
    left as a note elsewhere)."""
    out = []
    starts = (token.NEWLINE, token.INDENT, token.DEDENT)    # the token before a statement's first
    prev = token.NEWLINE
    toks = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.NL]
    for i, t in enumerate(toks):
        if t.type == tokenize.COMMENT:
            out.append((t.start[0], t.string))
            continue
        if t.type == token.STRING and prev in starts:
            nxt = next((u for u in toks[i + 1:] if u.type != tokenize.COMMENT), None)
            if nxt is None or nxt.type in (token.NEWLINE, token.ENDMARKER):
                out.append((t.start[0], t.string))
        prev = t.type
    return out


def findings(source: str, c_like: bool = False) -> list[str]:
    """``line: text`` of every date or microsecond timing in a comment or docstring of ``source``
    (a Python module, or with ``c_like`` a kernel source)."""
    out = []
    for line, text in (c_comments(source) if c_like else comments_and_docstrings(source)):
        for k, row in enumerate(text.splitlines()):
            if DATE.search(row) or MICROSECONDS.search(row):
                out.append(f"{line + k}: {row.strip()}")
    return out


def test_the_product_has_files_to_read():
    files = product_files()
    assert len(files) >= 50 and {"filter2d_best.py", "filter2d_best.cl"} <= {p.name for p in files}


@pytest.mark.parametrize("path", product_files(), ids=lambda p: p.relative_to(ROOT.resolve()).as_posix()
                         if p.is_relative_to(ROOT.resolve()) else str(p))
def test_no_date_or_microsecond_timing_in_a_comment_or_docstring(path):
    found = findings(path.read_text(encoding="utf-8"), c_like=path.suffix != ".py")
    assert not found, f"{path.name}: dated timings belong in lab/runs/ and docs/performance.md:\n" + "\n".join(found)


def test_the_scan_sees_comments_and_docstrings_and_not_code_or_strings():
    src = '''"""Module doc, timed 2026-11-27."""
x = "12 us"          # a comment: 12.4 µs on the H100
def f():
    """Runs in 8us."""
    return "2026-01-01"
y = ("not a docstring 3 us")
class C:
    # measured 2025-03-04
    pass
'''
    got = findings(src)
    assert [g.split(":")[0] for g in got] == ["1", "2", "4", "8"], got


@pytest.mark.parametrize("text", ["# 6.7 / 5.3 / 6.6 µs", "# 12us", "# 2026-11-28", "# on 2024-02-29 it was",
                                  "# 0.5 us per launch"])
def test_each_form_of_dated_timing_is_found(text):
    assert findings(text + "\n")


@pytest.mark.parametrize("text", ["# microseconds, as the bench reports", "# thus", "# bus width 256",
                                  "# 2 MiB", "# lanes: 16 u8 per word", "# r2026 x"])
def test_words_and_sizes_are_not_taken_for_timings(text):
    assert not findings(text + "\n")


def test_the_scan_of_a_kernel_source_sees_its_comments_only():
    src = '/* tile 16, 2026-11-27 */\nint x = 3; // 12.8 us here\nconst char *s = "4 us";\n/* two\n   lines: 8us */\n'
    assert [g.split(":")[0] for g in findings(src, c_like=True)] == ["1", "2", "5"]
