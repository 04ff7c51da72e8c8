"""Terminal rendering of ``refconv check`` results (rich markup).

Rules:

* every string that comes from a user, a plugin or a variant (ids, reasons, exception messages,
  case lines, paths, ``describe()`` lines) goes through :func:`esc` before it is embedded in
  markup, so ``tile[/n]`` neither crashes rich nor disappears, and ``smem[ty][tx]`` is printed
  as written;
* the matrix has short columns only (variant, result, examples, worst error, time) and fits an
  80-column terminal with every variant id whole on one line, so it can be copied into
  ``--variant``: when the ids are too long for the width, the other columns wrap, then are left
  out (time, then examples, then worst error; a line below says so) — :func:`fitted_table`, which
  ``refconv list`` uses too; reasons (one line each, cut at :data:`REASON_LIMIT`
  characters: the reason leads, the JSON has it whole), minimised cases and reproducer paths follow below it, one
  per line, printed without folding (``soft_wrap``) so a path can be copied whole;
* "worst error" says what the verdict used, in units a reader can judge: on a passing row the
  largest accepted error as a fraction of its error bound (``0.31 of bound``; ``0 (exact)`` when
  every result was bit-exact), so ``2.03e+31`` between two values near 1e38 reads as the small
  share of the bound it is; on a failing row the worst rejected error, in ULPs where the
  acceptance compares exactly (``3 ulp (exact)``) or as a fraction of the bound (``2.4 of
  bound``), and the failures that are no finite difference by name (``non-finite``,
  ``unwritten``, ``border``, ``findings``): :func:`worst_error`.  A report written before the
  fraction was recorded shows the absolute or relative difference (:func:`fmt_err`).
"""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .case import Case

STYLE = {"pass": "green", "fail": "bold red", "error": "bold magenta", "unavailable": "yellow", "skipped": "dim"}


def esc(s) -> str:
    """``s`` as literal text inside rich markup."""
    return escape(str(s))


def fmt_err(abs_err: float, rel_err: float) -> str:
    """One difference, absolute or relative: for a report that records no fraction of the bound
    (the absolute value when it means something on its own: at most 1, or a whole number below
    2**24, or a relative error of 100 % or more; else the relative one, ``rel``)."""
    if abs_err != abs_err:
        return "nan"
    if abs_err == 0:
        return "0 (exact)"
    if abs_err <= 1 or (float(abs_err).is_integer() and abs_err < 2 ** 24) or not rel_err < 1:
        return f"{abs_err:.3g}"     # a relative error of 100 % or more (against 0 ...) says less
    return f"{rel_err:.3g} rel"


def _number(x) -> float | None:
    """``x`` as a finite float, or None (absent, not a number, NaN or infinite: an older or a
    hand-edited report)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x or x in (float("inf"), float("-inf")):
        return None
    return float(x)


def fmt_share(share: float) -> str:
    """An error as a fraction of its bound: ``0.31 of bound``."""
    return f"{share:.2g} of bound"


def fmt_ulps(ulps: float) -> str:
    """A distance in units in the last place: ``3 ulp``."""
    return f"{ulps:.0f} ulp" if ulps < 1e6 else f"{ulps:.3g} ulp"


def worst_error(r) -> str:
    """The "worst error" cell (see the module docstring): for a pass, the largest accepted error as
    a fraction of its bound (``0 (exact)``: every result was bit-exact); for a failure, the worst
    rejected error, ``N ulp (exact)`` where only the spec's value was accepted, ``F of bound``
    otherwise; a failure without a finite difference says what it was (``non-finite``,
    ``unwritten``, ``border``, ``findings``)."""
    if r.status == "pass":
        if not r.worst_abs:
            return "0 (exact)"
        share = _number(getattr(r, "worst_of_bound", None))
        return fmt_err(r.worst_abs, r.worst_rel) if share is None else fmt_share(share)
    f = r.failure or {}
    used = " (exact)" if f.get("exact") else " (bound)"
    if f.get("n_bad"):
        ulps, share = _number(f.get("ulps")), _number(f.get("of_bound"))
        if ulps:
            return fmt_ulps(ulps) + " (exact)"
        if share:
            return fmt_share(share)
        a = f.get("max_abs", 0.0)
        if ulps is None and share is None and a and a == a:   # a report without them
            return fmt_err(a, f.get("max_rel", 0.0)) + used
        return f"{f['n_bad']} non-finite{used}"   # the rejected elements differ by no finite amount
    if f.get("n_unwritten"):
        return f"{f['n_unwritten']} unwritten"
    if f.get("n_border"):
        return f"{f['n_border']} border"
    if f.get("findings"):
        return "findings"
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


#: the most characters of a reason printed on a variant's line below the matrix (and 150 on the
#: live line): enough for the reason, which leads (a compile error's cause before the kernel's
#: signature and the compiler's log); the JSON report keeps it whole
REASON_LIMIT = 400


def reason_text(reason, limit: int = REASON_LIMIT) -> str:
    """``reason`` as one line (its lines and runs of white space joined by one space), cut at
    ``limit`` characters with what was left out said: a compiler's log of hundreds of lines
    neither floods the terminal nor pushes the next variant away."""
    one = " ".join(str(reason).split())
    if len(one) <= limit:
        return one
    return f"{one[:limit].rstrip()} … (+{len(one) - limit} characters: the --json report has the whole reason)"


def result_line(r) -> str:
    """The live one-line result printed when a variant finishes (markup): the variant id whole,
    then for a variant that did not pass the start of its reason."""
    col = STYLE.get(r.status, "")
    line = f"[{col}]{r.status:>5}[/] {esc(r.variant)}  {r.examples} ex. {r.seconds:.1f}s"
    if r.status != "pass":
        line += f"  — {esc(reason_text(r.reason, 150))}"
    return line


def fitted_table(columns: list[tuple[str, dict]], rows: list[list[str]], width: int | None,
                 drop: tuple = (), title: str | None = None) -> tuple[Table, list[str]]:
    """A table of ``rows`` whose ``no_wrap`` columns (the ids) are never shortened: when the
    table cannot fit ``width`` columns with them whole and every other column at least as wide as
    its longest word, the columns named in ``drop`` are left out, in that order, until it fits.
    Returns the table and the names of the columns left out.  ``columns``: ``(name, keyword
    arguments of Table.add_column)``; ``rows``: markup strings."""
    names = [c for c, _ in columns]
    plain = [[Text.from_markup(c).plain for c in r] for r in rows]

    def least(i) -> int:   # the narrowest column i can be without cutting a cell
        cells = [r[i] for r in plain] + [names[i]]
        if columns[i][1].get("no_wrap"):
            return max(len(line) for c in cells for line in (c.splitlines() or [""]))
        return max((len(w) for c in cells for w in c.split()), default=1)

    def keep(out):
        return [i for i, c in enumerate(names) if c not in out]

    left_out: list[str] = []
    for name in drop:
        if width is None or 1 + sum(least(i) + 3 for i in keep(left_out)) <= width:
            break
        left_out.append(name)
    t = Table(title=title, show_lines=False)
    for i in keep(left_out):
        name, kw = columns[i]
        t.add_column(name, min_width=least(i), **kw)
    for r in rows:
        t.add_row(*(r[i] for i in keep(left_out)))
    return t, left_out


def matrix(ordered, asked: int | None = None, title: str = "refconv check", width: int | None = None):
    """The result matrix (a rich Table) and the columns left out to keep every variant id whole
    and on one line at ``width`` columns (time first, then examples, then worst error)."""
    columns = [("variant", {"no_wrap": True}), ("result", {"no_wrap": True}), ("examples", {}),
               ("worst error", {}), ("time", {"no_wrap": True, "justify": "right"})]
    rows = [[esc(r.variant), f"[{STYLE.get(r.status, '')}]{r.status}[/]", esc(examples(r, asked)),
             esc(worst_error(r)), f"{r.seconds:.1f}s"] for r in ordered]
    return fitted_table(columns, rows, width, drop=("time", "examples", "worst error"), title=title)


def details(ordered) -> list[str]:
    """The lines below the matrix (markup): for every variant that did not pass, its id whole and
    its reason (one line, :func:`reason_text`), its minimised case and its reproducer, each on its
    own line; for any variant, the examples its example database could not save."""
    out = []
    for r in ordered:
        lost = getattr(r, "database_error", "")
        if r.status == "pass":
            if lost:
                out.append(f"[yellow]pass[/] {esc(r.variant)} — [red]{esc(lost)}[/]")
            continue
        col = STYLE.get(r.status, "")
        out.append(f"[{col}]{r.status}[/] {esc(r.variant)} — {esc(reason_text(r.reason))}")
        if r.status in ("fail", "error"):
            case = case_line(r)
            if case:
                out.append(f"     [dim]{esc(case)}[/]")
            if r.reproducer:
                out.append(f"     repro: refconv repro {esc(r.reproducer)}")
            elif getattr(r, "reproducer_error", ""):
                out.append(f"     [red]reproducer not saved: {esc(r.reproducer_error)}[/]")
        if lost:
            out.append(f"     [red]{esc(lost)}[/]")
    return out


def print_matrix(console, ordered, elapsed: float, asked: int | None = None) -> None:
    t, left_out = matrix(ordered, asked, width=console.width)
    console.print(t)
    if left_out:
        console.print(f"[dim](left out to keep the ids whole at {console.width} columns: {', '.join(left_out)}; "
                      f"a wider terminal or the --json report has them)[/]")
    for line in details(ordered):
        console.print(line, soft_wrap=True)
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    console.print(f"{len(ordered)} variants: {summary} in {elapsed:.1f}s")
