"""Terminal rendering of ``refconv check`` results (rich markup).

Rules:

* every string that comes from a user, a plugin or a variant (ids, reasons, exception messages,
  case lines, paths, ``describe()`` lines) goes through :func:`esc` before it is embedded in
  markup, so ``tile[/n]`` neither crashes rich nor disappears, and ``smem[ty][tx]`` is printed
  as written;
* the matrix has short columns only (variant, result, examples, worst error, time) and fits an
  80-column terminal; reasons, minimised cases and reproducer paths follow below it, one per line,
  printed without folding (``soft_wrap``) so a path can be copied whole;
* "worst error" is absolute when that number means something on its own (at most 1, or a whole
  number of units below 2**24, as for integer results) and relative (``rel``) otherwise: a
  difference of 2.03e+31 between two values near 1e38 says nothing, its relative size does.
"""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .case import Case

STYLE = {"pass": "green", "fail": "bold red", "error": "bold magenta", "unavailable": "yellow", "skipped": "dim"}


def esc(s) -> str:
    """``s`` as literal text inside rich markup."""
    return escape(str(s))


def fmt_err(abs_err: float, rel_err: float) -> str:
    """One accepted or rejected difference, absolute or relative (see the module docstring)."""
    if abs_err == 0:
        return "0 (exact)"
    if abs_err != abs_err:
        return "nan"
    if abs_err <= 1 or (float(abs_err).is_integer() and abs_err < 2 ** 24):
        return f"{abs_err:.3g}"
    return f"{rel_err:.3g} rel"


def worst_error(r) -> str:
    if r.status == "pass":
        return fmt_err(r.worst_abs, r.worst_rel)
    f = r.failure or {}
    if f.get("n_bad"):
        return fmt_err(f.get("max_abs", 0.0), f.get("max_rel", 0.0))
    return "-"


def examples(r, asked: int | None = None) -> str:
    """The examples run; shrinking steps after the first failure are counted apart (``+N shrink``),
    and a count above ``asked`` (replayed database examples) says so."""
    s = str(r.examples)
    extra = getattr(r, "shrink_examples", 0)
    if extra:
        s += f" +{extra} shrink"
    if asked is not None and r.examples > asked:
        s += f" ({r.examples - asked} replayed)"
    return s


def case_line(r) -> str:
    f = r.failure or {}
    if f.get("case"):
        return f["case"]
    return Case.join(f.get("descriptor") or "", f.get("params"))


def result_line(r) -> str:
    """The live one-line result printed when a variant finishes (markup)."""
    col = STYLE.get(r.status, "")
    line = f"[{col}]{r.status:>5}[/] {esc(r.variant)}  {r.examples} ex. {r.seconds:.1f}s"
    if r.status != "pass":
        line += f"  — {esc(r.reason[:150])}"
    return line


def matrix(ordered, asked: int | None = None, title: str = "refconv check") -> Table:
    t = Table(title=title, show_lines=False)
    t.add_column("variant", overflow="fold", ratio=1)
    t.add_column("result", no_wrap=True)
    t.add_column("examples", no_wrap=True)
    t.add_column("worst error", no_wrap=True)
    t.add_column("time", no_wrap=True, justify="right")
    for r in ordered:
        t.add_row(esc(r.variant), f"[{STYLE.get(r.status, '')}]{r.status}[/]", esc(examples(r, asked)),
                  worst_error(r), f"{r.seconds:.1f}s")
    return t


def details(ordered) -> list[str]:
    """The lines below the matrix (markup): for every variant that did not pass, its reason, its
    minimised case and its reproducer, each on its own line."""
    out = []
    for r in ordered:
        if r.status == "pass":
            continue
        col = STYLE.get(r.status, "")
        out.append(f"[{col}]{r.status}[/] {esc(r.variant)} — {esc(r.reason)}")
        if r.status in ("fail", "error"):
            case = case_line(r)
            if case:
                out.append(f"     [dim]{esc(case)}[/]")
            if r.reproducer:
                out.append(f"     repro: refconv repro {esc(r.reproducer)}")
            elif getattr(r, "reproducer_error", ""):
                out.append(f"     [red]reproducer not saved: {esc(r.reproducer_error)}[/]")
    return out


def print_matrix(console, ordered, elapsed: float, asked: int | None = None) -> None:
    console.print(matrix(ordered, asked))
    for line in details(ordered):
        console.print(line, soft_wrap=True)
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    console.print(f"{len(ordered)} variants: {summary} in {elapsed:.1f}s")
