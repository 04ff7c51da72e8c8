"""``refconv`` command line: ``list``, ``check``, ``repro``, ``bench``, ``specs``.

Backends add their own options to ``check``/``list``/``bench`` through
:class:`refconv.variant.BackendOption` (e.g. ``--opencl TARGET``); the core names none.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import registry
from .profiles import PROFILES, get_profile
from .variant import Backend

console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
STYLE = {"pass": "green", "fail": "bold red", "error": "bold magenta", "unavailable": "yellow", "skipped": "dim"}


# ----------------------------------------------------------------------------- options

def _backend_options():
    seen = {}
    for name, b in registry.backends().items():
        if isinstance(b, Backend):
            for o in b.options:
                seen.setdefault(o.dest, (name, o))
    return list(seen.values())


def _add_backend_options(p: argparse.ArgumentParser):
    for bname, o in _backend_options():
        help_ = f"[{bname}] {o.help}" + (f" (env {o.env})" if o.env else "")
        if o.is_flag:
            p.add_argument(o.flag, dest=o.dest, action="store_true", default=None, help=help_)
        else:
            p.add_argument(o.flag, dest=o.dest, choices=o.choices, default=None, metavar=(
                "{" + ",".join(map(str, o.choices)) + "}" if o.choices else o.dest.upper()), help=help_)


def backend_option_values(ns) -> dict:
    """Value of each backend option: command line, else environment variable, else default."""
    vals = {}
    for _, o in _backend_options():
        v = getattr(ns, o.dest, None) if ns is not None else None
        if v is None and o.env and os.environ.get(o.env) not in (None, ""):
            raw = os.environ[o.env]
            if o.is_flag:
                v = raw.lower() not in ("0", "false", "no", "off")
            else:
                if o.choices and raw not in o.choices:
                    raise SystemExit(f"refconv: environment {o.env}={raw!r} not accepted; accepted: "
                                     f"{', '.join(map(str, o.choices))}")
                v = raw
        if v is None:
            v = bool(o.default) if o.is_flag else o.default
        vals[o.dest] = v
    return vals


def configure(ns) -> dict:
    from .pool import configure_backends
    vals = backend_option_values(ns)
    configure_backends(vals)
    return vals


def _select(ns):
    vs = registry.variants(op=ns.op, backend=ns.backend, name=ns.variant)
    if not vs:
        known = ", ".join(sorted(registry.backends())) or "none"
        raise SystemExit(f"refconv: no variant matches op={ns.op!r} backend={ns.backend!r} "
                         f"variant={ns.variant!r}; installed backends: {known}")
    return vs


def availability(v) -> str | None:
    try:
        return registry.backend_reason(v.backend) or v.available()
    except Exception as e:  # availability probing must never crash the listing
        return f"availability check failed: {type(e).__name__}: {e}"


# ----------------------------------------------------------------------------- list

def cmd_list(ns) -> int:
    configure(ns)
    t = Table(title="refconv variants", show_lines=False)
    for col in ("op", "backend", "variant", "available", "params", "writes"):
        t.add_column(col)
    rows = 0
    for name, b in registry.backends().items():
        if ns.backend and not fnmatch.fnmatchcase(name, ns.backend):
            continue
        if not isinstance(b, Backend):
            t.add_row("*", name, "*", f"[red]no: {b.reason()}[/]", "", "")
            continue
        why = registry.backend_reason(name)
        desc = ""
        try:
            desc = b.describe() if why is None else ""
        except Exception as e:
            desc = f"describe() failed: {e}"
        if desc:
            console.print(f"[bold]{name}[/]: {desc}")
        for v in registry.variants(op=ns.op, backend=name, name=ns.variant):
            r = availability(v)
            ps = " ".join(f"{p.name}={'|'.join(map(str, p.values))}" for p in v.params)
            t.add_row(v.op, v.backend, v.name, "[green]yes[/]" if r is None else f"[yellow]no: {r}[/]", ps, v.writes)
            rows += 1
    console.print(t)
    console.print(f"{rows} variants")
    return 0


# ----------------------------------------------------------------------------- check

def cmd_check(ns) -> int:
    from .pool import Job, run_jobs
    from .runner import VariantResult
    bopts = configure(ns)
    prof = get_profile(ns.profile, ns.examples, ns.timeout)
    os.environ["REFCONV_TOLERANCE"] = ns.tolerance    # read by refconv.tolerance, here and in workers
    if ns.hang_shrink is not None and ns.hang_shrink < 0:
        raise ValueError(f"--hang-shrink must be >= 0 seconds, got {ns.hang_shrink:g}")
    hang_budget = 4 * prof.timeout if ns.hang_shrink is None else ns.hang_shrink
    variants = _select(ns)
    results: dict[str, VariantResult] = {}
    runnable = []
    for v in variants:
        why = availability(v)
        if why is None:
            runnable.append(v)
        else:
            results[v.id] = VariantResult(v.id, "unavailable", reason=why)

    # backend preflight (e.g. the compile check), over every selected variant: see refconv.preflight
    from . import preflight
    t0 = time.perf_counter()
    with console.status("preflight") as st:
        pre = preflight.run(variants, bopts, on_backend=lambda name, n: st.update(
            f"{name}: preflight of {n} variants"))
    if pre:
        console.print(f"preflight of {len(pre)} variants done in {time.perf_counter() - t0:.1f}s")

    failures_dir = None if ns.no_save else ns.failures_dir
    jobs = [Job(v.id, prof.name, ns.examples, ns.seed, ns.database, failures_dir) for v in runnable]
    workers = ns.jobs if ns.jobs else min(len(jobs), os.cpu_count() or 1) or 1
    t0 = time.perf_counter()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=console,
                        transient=False, disable=ns.quiet)
    with progress:
        total = progress.add_task(f"checking {len(jobs)} variants ({prof.name}, {prof.max_examples} ex.)",
                                  total=len(jobs), status="")
        tasks = {}

        def on_event(kind, vid, payload):
            if kind == "start" and vid not in tasks:
                tasks[vid] = progress.add_task(f"  {vid}", total=prof.max_examples, status="")
            if kind == "done":
                progress.advance(tasks[vid])
            if kind == "result":
                r = payload
                if vid in tasks:
                    progress.update(tasks[vid], visible=False)
                progress.advance(total)
                col = STYLE.get(r.status, "")
                progress.console.print(f"[{col}]{r.status:>5}[/] {vid}  {r.examples} ex. {r.seconds:.1f}s"
                                       + (f"  — {r.reason[:150]}" if r.status != "pass" else ""))

        results.update(run_jobs(jobs, workers=workers, timeout=prof.timeout, backend_options=bopts,
                                on_event=on_event))
    if hang_budget > 0:
        _shrink_hangs(results, prof.timeout, hang_budget, bopts, quiet=ns.quiet)
    elapsed = time.perf_counter() - t0

    for vid, found in pre.items():
        if vid in results:
            preflight.apply(results[vid], found)
    _save_hang_reproducers(results, failures_dir, prof.name)

    ordered = [results[v.id] for v in variants]
    _print_matrix(ordered, elapsed)
    if ns.json:
        Path(ns.json).write_text(json.dumps({"profile": prof.name, "tolerance": ns.tolerance, "seconds": elapsed, "backend_options": bopts,
                                             "results": [r.to_dict() for r in ordered]}, indent=1, default=str))
    if ns.junit:
        write_junit(ns.junit, ordered, elapsed)
    bad = [r for r in ordered if r.status in ("fail", "error")]
    return 1 if bad else 0


def _shrink_hangs(results, timeout, budget, bopts, quiet=False):
    """Shrink each hanging case (see refconv.hang_shrink) and put the smaller case in its result."""
    from .hang_shrink import shrink_hang
    from .problem import Problem
    from .strategies import parse_params
    for r in results.values():
        f = r.failure or {}
        if not (r.status == "error" and r.reason.startswith("hang") and f.get("case")):
            continue
        desc, _, ps = f["case"].partition(" @ ")
        v = registry.get(r.variant)
        with console.status(f"shrinking the hang of {r.variant}") as st:
            def on_attempt(n, case, outcome, _st=st, _v=r.variant):
                if not quiet:
                    _st.update(f"shrinking the hang of {_v}: attempt {n} ({outcome}) {case}")
            try:
                s = shrink_hang(v, Problem.parse(desc), parse_params(ps), timeout=timeout, budget=budget,
                                backend_options=bopts, slowest_example=f.get("slowest_example_s", 0.0),
                                on_attempt=on_attempt)
            except Exception as e:  # the hang stays reported as found
                r.reason = f"{r.reason}; not shrunk ({type(e).__name__}: {e})"
                continue
        how = (f"{s.attempts} attempts in {s.seconds:.0f}s" + ("" if s.complete else ", budget spent")
               + ("" if s.confirmed else "; the smaller case returned under the full timeout, kept the original"))
        if s.case != f["case"]:
            f.update(original_case=f["case"], case=s.case, descriptor=s.problem.descriptor(),
                     params=s.params)
            r.reason = f"{r.reason}; shrunk to {s.case} ({how})"
        else:
            r.reason = f"{r.reason}; no smaller case hangs ({how})"
        f["shrink"] = {"attempts": s.attempts, "seconds": round(s.seconds, 2), "complete": s.complete,
                       "confirmed": s.confirmed}
        console.print(f"[magenta]hang[/] {r.variant}: {r.reason}")


def _save_hang_reproducers(results, failures_dir, profile):
    """Hangs are detected by the parent (the worker was killed): save their case as a reproducer."""
    if not failures_dir:
        return
    from .checking import ExampleResult
    from .problem import Problem
    from .repro import save_reproducer
    from .strategies import parse_params
    for r in results.values():
        if r.status == "error" and r.failure and r.failure.get("case") and r.reproducer is None:
            case = r.failure["case"]
            desc, _, ps = case.partition(" @ ")
            try:
                v = registry.get(r.variant)
                p = Problem.parse(desc)
                er = ExampleResult("error", desc, parse_params(ps), message=r.reason)
                r.reproducer = str(save_reproducer(failures_dir, v, p, parse_params(ps), er, profile))
            except Exception:
                pass


def _fmt_err(r) -> str:
    if r.status != "pass":
        f = r.failure or {}
        return f"{f.get('max_abs', 0):.3g}" if f.get("n_bad") else "-"
    return f"{r.worst_abs:.3g}" if r.worst_abs else "0 (exact)"


def _print_matrix(ordered, elapsed):
    t = Table(title="refconv check", show_lines=False)
    for col in ("variant", "result", "examples", "worst error", "time", "detail"):
        t.add_column(col, overflow="fold")
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.status] = counts.get(r.status, 0) + 1
        detail = ""
        if r.status in ("fail", "error"):
            f = r.failure or {}
            case = f.get("case") or (f.get("descriptor", "") + (" @ " + " ".join(
                f"{k}={v}" for k, v in (f.get("params") or {}).items()) if f.get("params") else ""))
            detail = f"{r.reason[:200]}\n[dim]{case}[/]" + (f"\nrepro: refconv repro {r.reproducer}" if r.reproducer else "")
        elif r.status == "unavailable":
            detail = r.reason
        t.add_row(r.variant, f"[{STYLE.get(r.status, '')}]{r.status}[/]", str(r.examples), _fmt_err(r),
                  f"{r.seconds:.1f}s", detail)
    console.print(t)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    console.print(f"{len(ordered)} variants: {summary} in {elapsed:.1f}s")


def write_junit(path, results, elapsed):
    from xml.sax.saxutils import escape, quoteattr
    n_fail = sum(r.status == "fail" for r in results)
    n_err = sum(r.status == "error" for r in results)
    n_skip = sum(r.status in ("unavailable", "skipped") for r in results)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuites><testsuite name="refconv" tests="{len(results)}" failures="{n_fail}" '
             f'errors="{n_err}" skipped="{n_skip}" time="{elapsed:.3f}">']
    for r in results:
        op, backend, _ = r.variant.split("/", 2)
        lines.append(f'<testcase classname={quoteattr(op + "." + backend)} name={quoteattr(r.variant)} '
                     f'time="{r.seconds:.3f}">')
        body = json.dumps({"failure": r.failure, "findings": r.findings, "reproducer": r.reproducer}, default=str)
        if r.status == "fail":
            lines.append(f'<failure message={quoteattr(r.reason[:500])}>{escape(body)}</failure>')
        elif r.status == "error":
            lines.append(f'<error message={quoteattr(r.reason[:500])}>{escape(body)}</error>')
        elif r.status in ("unavailable", "skipped"):
            lines.append(f'<skipped message={quoteattr(r.reason[:500])}/>')
        lines.append(f"<system-out>{escape(r.statistics)}</system-out></testcase>")
    lines.append("</testsuite></testsuites>")
    Path(path).write_text("\n".join(lines))


# ----------------------------------------------------------------------------- repro

def cmd_repro(ns) -> int:
    import numpy as np
    from .repro import diff_rows, load_reproducer, replay
    from .strategies import parse_params
    configure(ns)
    doc = load_reproducer(ns.file)
    os.environ["REFCONV_TOLERANCE"] = ns.tolerance    # read by refconv.tolerance
    v = registry.get(doc["variant"])
    why = availability(v)
    if why:
        console.print(f"[yellow]{v.id} is not available here: {why}[/]")
        return 2
    params = parse_params(ns.params) if ns.params else None
    console.print(f"[bold]{v.id}[/]\ncase: {doc['case']}\nsaved: {doc['status']} — {doc['message']}")
    problem, params, r, got = replay(doc, v, params)
    for name, a in problem.inputs.items():
        if a.size <= 64:
            console.print(f"{name} {a.dtype}{list(a.shape)} =\n{np.array2string(a, threshold=64)}")
        else:
            console.print(f"{name} {a.dtype}{list(a.shape)}")
    col = STYLE.get(r.status, "")
    console.print(f"now: [{col}]{r.status}[/] {r.message}")
    for f in r.findings[:20]:
        console.print(f"  finding: {f}")
    rows, n = diff_rows(problem, v, np.asarray(got))
    if rows:
        t = Table(title=f"differences ({n} elements, first {len(rows)})")
        for c in ("index", "got", "expected (spec)"):
            t.add_column(c)
        for ix, g, e in rows:
            t.add_row(str(ix), repr(g.item() if hasattr(g, "item") else g), repr(e.item() if hasattr(e, "item") else e))
        console.print(t)
    return 0 if r.status == "pass" else 1


# ----------------------------------------------------------------------------- specs

def cmd_specs(ns) -> int:
    from . import specs
    for name in ("filter2d", "conv2d", "sobel", "matvec", "kron", "kron_blocks"):
        fn = getattr(specs, name, None)
        if fn is None:
            continue
        doc = (fn.__doc__ or "").strip().splitlines()
        console.print(f"[bold]refconv.specs.{name}[/] — {doc[0] if doc else ''}")
    return 0


# ----------------------------------------------------------------------------- main

TOLERANCE_HELP = ("float verdict: 'proven' (default; worst-case gamma_n bound, never a false alarm) or "
                  "'probabilistic' (Higham & Mary 2019: lambda*sqrt(n)*u, tighter on large n; a correct "
                  "result is rejected with probability <= 1e-9 per element when rounding errors behave as "
                  "independent mean-zero variables, more on adversarial data). Env REFCONV_TOLERANCE")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="refconv", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")

    def filters(p):
        p.add_argument("--op", help="op name or glob (filter2d, conv2d, sobel, matvec, kron)")
        p.add_argument("--backend", help="backend name or glob")
        p.add_argument("--variant", help="variant name glob, or a full-id glob like 'filter2d/*/CM_*'")
        _add_backend_options(p)

    p = sub.add_parser("list", help="table of ops × backends × variants with availability")
    filters(p)
    p = sub.add_parser("check", help="cross-check variants against the specs with Hypothesis")
    filters(p)
    p.add_argument("--profile", default="ci", choices=list(PROFILES), help="Hypothesis profile (default ci)")
    p.add_argument("--examples", type=int, help="examples per variant (overrides the profile)")
    p.add_argument("--seed", type=int, help="Hypothesis seed, for a reproducible run")
    p.add_argument("--timeout", type=float, help="seconds one example may run before it counts as a hang")
    p.add_argument("--hang-shrink", type=float, metavar="SECONDS",
                   help="time allowed to shrink each hanging case from outside the worker "
                        "(default: 4 × the timeout; 0 keeps the case as found)")
    p.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: number of CPUs)")
    p.add_argument("--database", help="Hypothesis example database: a directory, redis://..., or none "
                                      "(default .refconv/hypothesis, env REFCONV_DATABASE)")
    p.add_argument("--failures-dir", default=os.environ.get("REFCONV_FAILURES", ".refconv/failures"),
                   help="where minimised reproducers are saved (default .refconv/failures)")
    p.add_argument("--no-save", action="store_true", help="do not save reproducer files")
    p.add_argument("--json", help="write a JSON report to this file")
    p.add_argument("--junit", help="write a JUnit XML report to this file")
    p.add_argument("--quiet", "-q", action="store_true", help="no live progress bar")
    p.add_argument("--tolerance", choices=("proven", "probabilistic"),
                   default=os.environ.get("REFCONV_TOLERANCE") or "proven", help=TOLERANCE_HELP)
    p = sub.add_parser("repro", help="replay a saved reproducer file and print the diff")
    p.add_argument("file")
    p.add_argument("--params", help="override launch params, e.g. 'bx=8 by=4'")
    p.add_argument("--tolerance", choices=("proven", "probabilistic"),
                   default=os.environ.get("REFCONV_TOLERANCE") or "proven",
                   help="float verdict of the replay (use the mode of the run that saved the file)")
    _add_backend_options(p)
    sub.add_parser("specs", help="list the reference specs")
    try:
        from .bench import add_parser as add_bench
        add_bench(sub, filters)
    except ImportError:
        pass
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    ns = ap.parse_args(argv)
    if ns.cmd is None:
        ap.print_help()
        return 0
    handler = {"list": cmd_list, "check": cmd_check, "repro": cmd_repro, "specs": cmd_specs}.get(ns.cmd)
    if handler is None:
        from .bench import cmd_bench
        handler = cmd_bench
    try:
        return handler(ns)
    except (ValueError, KeyError, FileNotFoundError) as e:
        console.print(f"[red]refconv {ns.cmd}: {e}[/]")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
