"""``refconv list``: the table of ops × backends × variants, with each variant's availability,
launch params, what it writes and the sizes it supports."""
from __future__ import annotations

from .. import registry, render
from ..console import console, err_console
from ..render import esc
from .common import session_from


def _fmt_limit(v) -> str:
    if isinstance(v, tuple):
        return "x".join(map(str, v))
    if isinstance(v, int) and v >= 1 << 20:
        return f"{v / 2**30:.1f}GiB" if v >= 1 << 30 else f"{v / 2**20:.0f}MiB"
    return str(v)


def _domain_text(v) -> str:
    """The size dims of ``v``'s real domain (its supports over the op's), e.g. ``h=3.. w=3.. kh=3``;
    device limits are the backend's (printed above the table) and act through its constraint."""
    from .. import ops
    from ..variant import Range
    parts = []
    for k, dom in ops.get(v.op).dims.items():
        d = v.supports.get(k, dom)
        if k == "dtype":
            continue
        if isinstance(d, Range):
            parts.append(f"{k}={d.lo}" if d.hi == d.lo else f"{k}={d!r}")
        else:
            parts.append(f"{k}={'|'.join(map(str, d))}")
    return " ".join(parts)


def cmd_list(ns) -> int:
    """Print the variants the filters select, one row each; backends that failed to load as rows
    and lines of their own (the run still exits 0).  Filters that select nothing are a usage
    error (exit 2)."""
    session = session_from(ns)
    session.configure()
    session.variants()   # UsageError when the filters select nothing (naming the filter and what is installed)
    for line in session.unused_options(session.selected()):
        err_console.print(f"refconv list: warning: {esc(line)}")
    cells: list[list[str]] = []
    broken = session.broken()
    for name, b in session.backends().items():
        if name in broken:
            cells.append(["*", esc(name), "*", f"[red]no: {esc(broken[name])}[/]", "", "", ""])
            continue
        why = registry.backend_reason(name)
        desc = ""
        try:
            desc = b.describe() if why is None else ""
        except Exception as e:
            desc = f"describe() failed: {type(e).__name__}: {e}"
        if desc:
            console.print(f"[bold]{esc(name)}[/]: {esc(desc)}")
        tgt = registry.target(name) if why is None else None
        if tgt is not None and tgt.limits:
            lim = ", ".join(f"{k}={_fmt_limit(v)}" for k, v in tgt.limits.items() if v is not None)
            console.print(f"  device limits{' (simulated)' if tgt.simulated else ''}: {lim}", markup=False)
        for v in session.selected(backend=name):
            r = session.availability(v)
            ps = " ".join(f"{p.name}={'|'.join(map(str, p.values))}" for p in v.params)
            cells.append([esc(v.op), esc(v.backend), esc(v.name),
                          "[green]yes[/]" if r is None else f"[yellow]no: {esc(r)}[/]", esc(ps),
                          v.writes + ("" if v.output == "array" else f", {v.output}"), esc(_domain_text(v))])
    rows = sum(c[0] != "*" for c in cells)
    # op, backend and variant stay whole (copyable into --op/--backend/--variant); the other
    # columns wrap, and at a narrow width the sizes, then the params, then writes are left out
    t, left_out = render.fitted_table(
        [("op", {"no_wrap": True}), ("backend", {"no_wrap": True}), ("variant", {"no_wrap": True}),
         ("available", {}), ("params", {}), ("writes", {}), ("sizes (supports)", {})], cells, console.width,
        drop=("sizes (supports)", "params", "writes"), title="refconv variants")
    console.print(t)
    if left_out:
        console.print(f"(left out to keep the names whole at {console.width} columns: {', '.join(left_out)}; "
                      f"widen the terminal, e.g. COLUMNS=200 refconv list)", soft_wrap=True)
    for name, why in broken.items():   # whole, on its own line: a table cell would fold it
        console.print(f"[red]{esc(name)}[/]: no: {esc(why)}", soft_wrap=True)
    console.print(f"{rows} variants" + (f"; {len(broken)} backend(s) failed to load" if broken else ""))
    return 0
