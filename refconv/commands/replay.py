"""``refconv repro FILE``: replay a saved reproducer (:mod:`refconv.repro`) in a worker process,
under the backend options and float verdict it recorded unless the command line or the
environment sets them, and print the inputs, the verdict and the differences."""
from __future__ import annotations

import math
import sys

from rich.table import Table

from .. import registry
from ..case import parse_params
from ..console import console
from ..errors import UsageError
from ..render import STYLE, esc
from ..session import env_tolerance, option_flags
from .common import session_from


def cmd_repro(ns) -> int:
    """Replay ``ns.file``; exit 0 when the case passes now, 1 when it fails, hangs or crashes, 2
    when the variant cannot run here."""
    from ..procs import MIN_TIMEOUT
    from ..repro import check_fits, check_params, load_reproducer, recorded_options, replay_in_worker
    if not (ns.timeout >= MIN_TIMEOUT and math.isfinite(ns.timeout)):
        raise UsageError(f"--timeout {ns.timeout:g} not accepted; accepted: a finite number of seconds "
                         f">= {MIN_TIMEOUT:g} (the least a hang can be judged by)")
    doc = load_reproducer(ns.file)
    recorded, rec_tol = recorded_options(doc)
    session = session_from(ns, recorded=recorded)
    # the float verdict: --tolerance, else REFCONV_TOLERANCE, else the saving run's, else proven
    session.tolerance = ns.tolerance or env_tolerance() or rec_tol or "proven"
    bopts = session.configure()
    session.apply_tolerance()
    try:
        v = registry.get(doc["variant"])
    except (KeyError, ValueError) as e:   # the file names a variant that is not installed here
        raise UsageError(f"{ns.file}: {e.args[0] if e.args else e}") from None
    check_fits(v, doc, ns.file)
    why = session.availability(v)
    if why:
        console.print(f"[yellow]{esc(v.id)} is not available here: {esc(why)}[/]")
        return 2
    params = parse_params(ns.params) if ns.params else None
    if params is not None:
        check_params(v, params)
    console.print(f"[bold]{esc(v.id)}[/]\ncase: {esc(doc['case'])}\nsaved: {esc(doc.get('status'))} — {esc(doc.get('message'))}")
    _print_options(doc, recorded, rec_tol, bopts, session.tolerance)
    sys.stdout.flush()
    kind, r, got = replay_in_worker(doc, params, timeout=ns.timeout, backend_options=bopts,
                                    tolerance=session.tolerance)
    if kind == "invalid":
        raise UsageError(f"{ns.file}: the saved case cannot be run: {r}")
    return _print_outcome(doc, v, kind, r, got)


def _print_options(doc: dict, recorded: dict, rec_tol, bopts: dict, tolerance: str) -> None:
    """One line with the options of the replay, and whether they are the ones the reproducer
    recorded (nothing when both are the defaults)."""
    rec = " ".join(filter(None, [option_flags(recorded), f"--tolerance {rec_tol}" if rec_tol and rec_tol != "proven" else ""]))
    now = " ".join(filter(None, [option_flags(bopts), f"--tolerance {tolerance}" if tolerance != "proven" else ""]))
    if rec or now:
        console.print(f"options: {esc(now) or 'the defaults'}" + (" (recorded in the reproducer)" if now == rec else
                      f" (the reproducer recorded {esc(rec) or 'the defaults' if 'backend_options' in doc else 'none'}; "
                      f"the command line or the environment changed them)"))


def _print_outcome(doc: dict, v, kind: str, r, got) -> int:
    """The inputs (small ones in full), the verdict of the replay and a table of the differing
    elements; returns the exit status (0: passes now)."""
    import numpy as np

    from ..repro import diff_rows, saved_problem
    problem = saved_problem(doc)
    for name, a in problem.inputs.items():
        if a.size <= 64:
            console.print(esc(f"{name} {a.dtype}{list(a.shape)} =\n{np.array2string(a, threshold=64)}"))
        else:
            console.print(esc(f"{name} {a.dtype}{list(a.shape)}"))
    if kind != "result":  # hang or crash: r is the reason
        console.print(f"now: [{STYLE['error']}]error[/] {esc(r)}")
        return 1
    console.print(f"now: [{STYLE.get(r.status, '')}]{r.status}[/] {esc(r.message)}")
    for f in r.findings[:20]:
        console.print(f"  finding: {esc(f)}")
    rows, n = diff_rows(problem, v, np.asarray(got)) if got is not None else ([], 0)
    if rows:
        t = Table(title=f"differences ({n} elements, first {len(rows)})")
        for c in ("index", "got", "expected (spec)"):
            t.add_column(c)
        for ix, g, e in rows:
            t.add_row(esc(ix), esc(repr(g.item() if hasattr(g, "item") else g)),
                      esc(e if isinstance(e, str) else repr(e.item() if hasattr(e, "item") else e)))
        console.print(t)
    return 0 if r.status == "pass" else 1
