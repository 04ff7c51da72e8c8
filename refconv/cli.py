"""``refconv`` command line: ``list``, ``check``, ``repro``, ``merge``, ``bench``, ``specs``.

Backends add their own options to ``check``/``list``/``bench`` through
:class:`refconv.variant.BackendOption` (e.g. a ``--TARGET`` choice); the core names none.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

from rich.table import Table

from . import ops, registry, render
from .case import parse_params
from .console import check_progress, console, err_console
from .profiles import PROFILES
from .render import STYLE, esc
from .report import write_junit  # noqa: F401  (re-exported: refconv.cli.write_junit)
from .session import (TOLERANCE_HELP, TOLERANCES, Session, UsageError, backend_options, env_tolerance,
                      negated_flag, nothing_checked, option_flags, worker_count)

__all__ = ["main", "build_parser", "session_from", "UsageError", "worker_count", "write_junit"]


# ----------------------------------------------------------------------------- argument types

def _seconds(flag: str, zero_ok: bool):
    """argparse type: a finite number of seconds, > 0 (>= 0 when ``zero_ok``)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        if not (v == v and v not in (float("inf"), float("-inf"))) or v < 0 or (v == 0 and not zero_ok):
            raise argparse.ArgumentTypeError(
                f"{text!r} not accepted; accepted: a finite number of seconds "
                f"{'>= 0' if zero_ok else '> 0'}")
        return v
    return parse


def _count(flag: str, lo: int, hi: int | None = None):
    """argparse type: an integer >= ``lo`` (and <= ``hi`` when given)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = lo - 1
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{text!r} not accepted; accepted: an integer "
                                             + (f">= {lo}" if hi is None else f"from {lo} to {hi}"))
        return v
    return parse


#: the most ``--examples`` a run may ask for per variant (the thorough profile draws 500; a run of
#: 10**5 examples per variant under a simulator already takes days)
MAX_EXAMPLES = 100_000


def _glob(flag: str):
    """argparse type: a non-empty name or glob (an empty one would silently select nothing)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} not accepted; accepted: a non-empty name or "
                                             f"glob (leave the option out to select everything)")
        return text
    return parse


# ----------------------------------------------------------------------------- options

def refconv_version() -> str:
    """The installed refconv's version (its distribution metadata, else the package's)."""
    try:
        from importlib.metadata import version
        return version("refconv")
    except Exception:  # not installed as a distribution (a source tree on sys.path)
        from . import __version__
        return __version__


def _add_backend_options(p: argparse.ArgumentParser):
    for bname, o in backend_options():
        help_ = f"[{bname}] {o.help}" + (f" (env {o.env})" if o.env else "")
        if o.is_flag:
            p.add_argument(o.flag, dest=o.dest, action="store_true", default=None, help=help_)
            p.add_argument(negated_flag(o), dest=o.dest, action="store_false", default=None,
                           help=f"[{bname}] turn {o.flag} off")
        else:
            p.add_argument(o.flag, dest=o.dest, choices=o.choices, default=None, metavar=(
                "{" + ",".join(map(str, o.choices)) + "}" if o.choices else o.dest.upper()), help=help_)


def session_from(ns, recorded=None) -> Session:
    """The :class:`refconv.session.Session` of a parsed command line (``recorded``: the backend
    options a reproducer recorded)."""
    return Session(op=getattr(ns, "op", None), backend=getattr(ns, "backend", None),
                   variant=getattr(ns, "variant", None),
                   options={o.dest: getattr(ns, o.dest, None) for _, o in backend_options()},
                   recorded=recorded or {}, profile_name=getattr(ns, "profile", None),
                   examples=getattr(ns, "examples", None), timeout=getattr(ns, "timeout", None),
                   tolerance=getattr(ns, "tolerance", None))


def broken_results(session):
    """A row ``*/name/*`` (status unavailable, the error as reason) for every selected backend that
    cannot give variants (import failed, ``variants()`` raised): shown, never silently left out."""
    from .runner import VariantResult
    return [VariantResult(f"*/{name}/*", "unavailable", reason=why) for name, why in session.broken().items()]


# ----------------------------------------------------------------------------- list

def _fmt_limit(v) -> str:
    if isinstance(v, tuple):
        return "x".join(map(str, v))
    if isinstance(v, int) and v >= 1 << 20:
        return f"{v / 2**30:.1f}GiB" if v >= 1 << 30 else f"{v / 2**20:.0f}MiB"
    return str(v)


def _domain_text(v) -> str:
    """The size dims of ``v``'s real domain (its supports over the op's), e.g. ``h=3.. w=3.. kh=3``;
    device limits are the backend's (printed above the table) and act through its constraint."""
    from . import ops
    from .variant import Range
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
    session = session_from(ns)
    session.configure()
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


# ----------------------------------------------------------------------------- check

def validate_outputs(ns) -> None:
    """Every output path of ``check`` (and the example database) is usable, before the run starts
    (``ValueError`` naming the option otherwise: exit 2)."""
    from .report import check_output_dir, check_report_paths
    check_report_paths(ns.json, ns.junit)
    if ns.failures_dir and not ns.no_save:
        check_output_dir("--failures-dir", ns.failures_dir)
    from .profiles import database
    db = database(ns.database)   # a database spec the workers could not open (redis without the extra ...)
    path = getattr(db, "path", None)
    if path is not None:   # a directory: Hypothesis would silently drop every example it cannot save
        try:
            check_output_dir("--database" if ns.database else (
                "REFCONV_DATABASE" if os.environ.get("REFCONV_DATABASE") else "--database (default)"), str(path))
        except ValueError as e:
            raise ValueError(f"{e}, redis://..., or none (keep no examples)") from None


@contextlib.contextmanager
def report_on_stdout(wanted: bool):
    """With ``wanted`` (``--json -``): file descriptor 1 is pointed at stderr for the block, so the
    matrix, the progress and whatever a worker prints go to stderr, and the block gets a duplicate
    of the real stdout (an fd) to write the report to; without: yields ``None``."""
    if not wanted:
        yield None
        return
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    try:
        yield real
    finally:
        try:
            sys.stdout.flush()
        finally:
            os.dup2(real, 1)
            os.close(real)


def write_to_fd(fd: int, text: str) -> None:
    """Write ``text`` (and a newline) to the open file descriptor ``fd``, leaving it open."""
    with os.fdopen(os.dup(fd), "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


def run_info(ns, started: float) -> dict:
    """What a report records about the run that wrote it: refconv's version, the seed, when it
    started (UTC, ISO 8601) and its command line."""
    import datetime
    import shlex
    return {"refconv_version": refconv_version(), "seed": getattr(ns, "seed", None),
            "started": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(["refconv", *getattr(ns, "argv", sys.argv[1:])])}


def _private_hypothesis_home():
    """Hypothesis keeps caches in ``./.hypothesis`` unless told otherwise; ``refconv check`` must
    not leave that folder in the user's working directory (its example database is elsewhere:
    ``--database``), so the run (workers inherit the environment) uses a temporary one, unless
    the user set ``HYPOTHESIS_STORAGE_DIRECTORY``.  Returns the directory to remove, or None."""
    import tempfile
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return None
    d = tempfile.mkdtemp(prefix="refconv-hypothesis-")
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = d
    return d


def cmd_check(ns) -> int:
    import shutil
    home = _private_hypothesis_home()
    ns.run_info = run_info(ns, time.time())
    try:
        with report_on_stdout(ns.json == "-") as ns.stdout_fd:
            return _check(ns)
    finally:
        if home:
            os.environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
            shutil.rmtree(home, ignore_errors=True)


def _check(ns) -> int:
    from .pool import Job, run_jobs
    from .repro import save_hang_reproducers
    from .runner import VariantResult
    ns.tolerance = ns.tolerance or env_tolerance() or "proven"
    session = session_from(ns)
    bopts = session.configure()
    prof = session.profile()
    session.apply_tolerance()    # read by refconv.tolerance, here and in workers
    hang_budget = 4 * prof.timeout if ns.hang_shrink is None else ns.hang_shrink
    validate_outputs(ns)
    variants = session.variants()
    problems = session.blocking_problems(variants)
    if problems:
        raise UsageError("\n".join(problems))
    for line in session.unused_options(variants):
        err_console.print(f"refconv check: warning: {esc(line)}")
    shard_info = None
    if ns.shard:
        from . import shard
        k, n = shard.parse_shard(ns.shard)
        shard_info = {"k": k, "n": n, "of": len(variants)}
        variants = shard.select(variants, k, n)
        console.print(f"shard {k}/{n}: {len(variants)} of {shard_info['of']} selected variants")
    results: dict[str, VariantResult] = {}
    runnable = []
    for v in variants:
        why = session.availability(v) or registry.simulated_reason(v, prof)
        if why is None:
            runnable.append(v)
        else:
            results[v.id] = VariantResult(v.id, "unavailable", reason=why)
    if prof.real_targets_only and not runnable:
        refused = [results[v.id].reason for v in variants if registry.simulated_reason(v, prof)]
        if refused:
            raise UsageError(refused[0])

    # backend preflight (e.g. the compile check), over every selected variant: see refconv.preflight
    from . import preflight
    t0 = time.perf_counter()
    with _reports_if_interrupted(ns, prof, lambda: time.perf_counter() - t0, bopts, variants, results, shard_info), \
            console.status("preflight") as st:
        pre = preflight.run(variants, bopts, on_backend=lambda name, n: st.update(
            f"{esc(name)}: preflight of {n} variants"))
    if pre:
        console.print(f"preflight of {len(pre)} variants done in {time.perf_counter() - t0:.1f}s")

    failures_dir = None if ns.no_save else ns.failures_dir
    jobs = [Job(v.id, prof.name, ns.examples, ns.seed, ns.database, failures_dir) for v in runnable]
    workers = worker_count(ns.jobs, len(jobs))
    t0 = time.perf_counter()
    progress = check_progress(ns.quiet)
    started: dict[str, float] = {}
    with progress:
        total = progress.add_task(f"checking {len(jobs)} variants ({prof.name}, {prof.max_examples} ex.)",
                                  total=len(jobs), status="")
        tasks = {}

        def on_event(kind, vid, payload):
            if kind == "start" and vid not in tasks:
                started.setdefault(vid, time.perf_counter())
                tasks[vid] = progress.add_task(f"  {esc(vid)}", total=prof.max_examples, status="")
            if kind == "done":
                progress.advance(tasks[vid])
            if kind == "result":
                r = payload
                results[vid] = r    # what finished, for the reports of an interrupted run
                if not r.seconds and vid in started:   # killed (hang) or died: the time it really took
                    r.seconds = time.perf_counter() - started[vid]
                if vid in tasks:
                    progress.update(tasks[vid], visible=False)
                progress.advance(total)
                progress.console.print(render.result_line(r))

        if jobs:
            with _reports_if_interrupted(ns, prof, lambda: time.perf_counter() - t0, bopts, variants, results,
                                         shard_info):
                results.update(run_jobs(jobs, workers=workers, timeout=prof.timeout, backend_options=bopts,
                                        on_event=on_event))
    if hang_budget > 0:
        with _reports_if_interrupted(ns, prof, lambda: time.perf_counter() - t0, bopts, variants, results, shard_info):
            _shrink_hangs(results, prof.timeout, hang_budget, bopts, quiet=ns.quiet)
    elapsed = time.perf_counter() - t0

    for vid, found in pre.items():
        if vid in results:
            preflight.apply(results[vid], found)
    save_hang_reproducers(results, failures_dir, prof.name, bopts, ns.tolerance)

    ordered = [results[v.id] for v in variants] + broken_results(session)
    render.print_matrix(console, ordered, elapsed, asked=prof.max_examples)
    code = 1 if any(r.status in ("fail", "error") for r in ordered) else 0
    code = max(code, _write_reports(ns, prof, elapsed, bopts, ordered, shard_info))
    if code == 0 and not (shard_info and not variants):   # an empty shard checked nothing, by design
        nothing = nothing_checked([results[v.id] for v in variants], pre)
        if nothing:
            err_console.print(f"refconv check: {esc(nothing)}")
            return 2
    return code


@contextlib.contextmanager
def _reports_if_interrupted(ns, prof, elapsed, bopts, variants, results, shard_info):
    """On Ctrl-C or SIGTERM inside the block, write the ``--json`` / ``--junit`` reports of what
    finished (``results``), every other variant ``skipped`` as not finished, then re-raise."""
    try:
        yield
    except KeyboardInterrupt as e:
        from .procs import Terminated
        from .runner import VariantResult
        what = "SIGTERM" if isinstance(e, Terminated) else "SIGINT"
        ordered = [results.get(v.id) or VariantResult(v.id, "skipped", reason=f"not finished: the run was "
                                                      f"interrupted ({what})") for v in variants]
        _write_reports(ns, prof, elapsed(), bopts, ordered, shard_info, interrupted=what)
        raise


def _write_reports(ns, prof, elapsed, bopts, ordered, shard_info=None, interrupted=None) -> int:
    """Write ``--json`` and ``--junit`` (atomically); one that cannot be written (the disk
    filled during the run ...) is reported on stderr and does not stop the other: returns 2 then.
    ``interrupted``: the signal that stopped the run (``SIGINT``, ``SIGTERM``), recorded in the JSON."""
    from .report import json_report, write_json
    code = 0
    info = {**getattr(ns, "run_info", {}), "interrupted": interrupted}
    if ns.json == "-":
        write_to_fd(ns.stdout_fd, json_report(prof.name, elapsed, bopts, ordered, shard=shard_info,
                                              tolerance=ns.tolerance, **info))
    for flag, path, write in (("--json", ns.json if ns.json != "-" else None,
                               lambda: write_json(ns.json, prof.name, elapsed, bopts, ordered, shard=shard_info,
                                                  tolerance=ns.tolerance, **info)),
                              ("--junit", ns.junit, lambda: write_junit(ns.junit, ordered, elapsed))):
        if not path:
            continue
        try:
            write()
        except OSError as e:
            err_console.print(f"refconv check: could not write {flag} {esc(path)}: {esc(e)}")
            code = 2
    return code


def _shrink_hangs(results, timeout, budget, bopts, quiet=False):
    """Shrink each hanging or crashing case (see refconv.hang_shrink) and put the smaller case in its result."""
    from .hang_shrink import HANG, hang_cases, shrink_hang
    for r, c, target in list(hang_cases(results)):
        f = r.failure
        v = registry.get(r.variant)
        with console.status(f"shrinking the {target} of {esc(r.variant)}") as st:
            def on_attempt(n, case, outcome, _st=st, _v=r.variant, _t=target):
                if not quiet:
                    _st.update(f"shrinking the {_t} of {esc(_v)}: attempt {n} ({esc(outcome)}) {esc(case)}")
            try:
                s = shrink_hang(v, c.problem, c.params, timeout=timeout, budget=budget,
                                backend_options=bopts, slowest_example=f.get("slowest_example_s", 0.0),
                                on_attempt=on_attempt, target=target)
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
            r.reason = f"{r.reason}; no smaller case {'hangs' if target == HANG else 'crashes'} ({how})"
        f["shrink"] = {"attempts": s.attempts, "seconds": round(s.seconds, 2), "complete": s.complete,
                       "confirmed": s.confirmed, "startup_seconds": round(s.startup_seconds, 2)}
        console.print(f"[magenta]{target}[/] {esc(r.variant)}: {esc(r.reason)}", soft_wrap=True)


def _print_matrix(ordered, elapsed, asked=None):
    """The result matrix and the details below it (see :mod:`refconv.render`)."""
    render.print_matrix(console, ordered, elapsed, asked)


# ----------------------------------------------------------------------------- repro

def cmd_repro(ns) -> int:
    import math

    import numpy as np
    from .repro import check_params, diff_rows, load_reproducer, recorded_options, replay_in_worker, saved_problem
    if not (ns.timeout > 0 and math.isfinite(ns.timeout)):
        raise ValueError(f"--timeout must be a finite number of seconds > 0, got {ns.timeout}")
    doc = load_reproducer(ns.file)
    recorded, rec_tol = recorded_options(doc)
    session = session_from(ns, recorded=recorded)
    # the float verdict: --tolerance, else REFCONV_TOLERANCE, else the saving run's, else proven
    session.tolerance = ns.tolerance or env_tolerance() or rec_tol or "proven"
    bopts = session.configure()
    session.apply_tolerance()    # read by refconv.tolerance
    v = registry.get(doc["variant"])
    why = session.availability(v)
    if why:
        console.print(f"[yellow]{esc(v.id)} is not available here: {esc(why)}[/]")
        return 2
    check_params(v, doc["params"], what=f"{ns.file}: saved params")
    params = parse_params(ns.params) if ns.params else None
    if params is not None:
        check_params(v, params)
    console.print(f"[bold]{esc(v.id)}[/]\ncase: {esc(doc['case'])}\nsaved: {esc(doc.get('status'))} — {esc(doc.get('message'))}")
    rec = " ".join(filter(None, [option_flags(recorded), f"--tolerance {rec_tol}" if rec_tol and rec_tol != "proven" else ""]))
    now = " ".join(filter(None, [option_flags(bopts), f"--tolerance {session.tolerance}" if session.tolerance != "proven" else ""]))
    if rec or now:
        console.print(f"options: {esc(now) or 'the defaults'}" + (" (recorded in the reproducer)" if now == rec else
                      f" (the reproducer recorded {esc(rec) or 'the defaults' if 'backend_options' in doc else 'none'}; "
                      f"the command line or the environment changed them)"))
    sys.stdout.flush()
    kind, r, got = replay_in_worker(doc, params, timeout=ns.timeout, backend_options=bopts)
    if kind == "invalid":
        raise ValueError(f"{ns.file}: the saved case cannot be run: {r}")
    problem = saved_problem(doc)
    for name, a in problem.inputs.items():
        if a.size <= 64:
            console.print(esc(f"{name} {a.dtype}{list(a.shape)} =\n{np.array2string(a, threshold=64)}"))
        else:
            console.print(esc(f"{name} {a.dtype}{list(a.shape)}"))
    if kind != "result":  # hang or crash: r is the reason
        console.print(f"now: [{STYLE['error']}]error[/] {esc(r)}")
        return 1
    col = STYLE.get(r.status, "")
    console.print(f"now: [{col}]{r.status}[/] {esc(r.message)}")
    for f in r.findings[:20]:
        console.print(f"  finding: {esc(f)}")
    rows, n = diff_rows(problem, v, np.asarray(got)) if got is not None else ([], 0)
    if rows:
        t = Table(title=f"differences ({n} elements, first {len(rows)})")
        for c in ("index", "got", "expected (spec)"):
            t.add_column(c)
        for ix, g, e in rows:
            t.add_row(esc(ix), esc(repr(g.item() if hasattr(g, "item") else g)),
                      esc(repr(e.item() if hasattr(e, "item") else e)))
        console.print(t)
    return 0 if r.status == "pass" else 1


# ----------------------------------------------------------------------------- merge

def cmd_merge(ns) -> int:
    """Join shard reports (refconv.merge) into one matrix, JSON and JUnit file; exit as one run."""
    import dataclasses

    from .merge import exit_status, load_report, merge_reports, report_text
    from .report import atomic_write, check_report_paths
    from .runner import VariantResult
    check_report_paths(ns.json, ns.junit)   # before anything is printed
    doc = merge_reports([load_report(f) for f in ns.reports], names=list(ns.reports),
                        merged={k: v for k, v in run_info(ns, time.time()).items() if k != "seed"})
    fields = {f.name for f in dataclasses.fields(VariantResult)}
    ordered = [VariantResult(**{k: v for k, v in r.items() if k in fields}) for r in doc["results"]]
    with report_on_stdout(ns.json == "-") as fd:
        _print_matrix(ordered, doc["seconds"])
        if fd is not None:
            write_to_fd(fd, report_text(doc))
    code = 0
    for flag, path, write in (("--json", ns.json if ns.json != "-" else None, lambda: atomic_write(ns.json, report_text(doc))),
                              ("--junit", ns.junit, lambda: write_junit(ns.junit, ordered, doc["seconds"]))):
        if not path:
            continue
        try:
            write()
        except OSError as e:
            err_console.print(f"refconv merge: could not write {flag} {esc(path)}: {esc(e)}")
            code = 2
    return max(code, exit_status(ordered))


# ----------------------------------------------------------------------------- specs

def cmd_specs(ns) -> int:
    from . import ops
    for rec in ops.records():
        fn = rec.spec
        doc = (fn.__doc__ or "").strip().splitlines()
        where = "refconv.specs" if fn.__module__.startswith("refconv.specs.") else fn.__module__
        console.print(f"[bold]{where}.{fn.__name__}[/] — {doc[0] if doc else ''}")
    return 0


# ----------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="refconv", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"refconv {refconv_version()}")
    sub = ap.add_subparsers(dest="cmd")

    def filters(p):
        p.add_argument("--op", type=_glob("--op"), help=f"op name or glob ({', '.join(ops.names())})")
        p.add_argument("--backend", type=_glob("--backend"), help="backend name or glob")
        p.add_argument("--variant", type=_glob("--variant"), action="append",
                       help="variant name glob, or a full-id glob like '<op>/*/CM_*'; given "
                            "more than once, a variant matching any of them is selected")
        _add_backend_options(p)

    p = sub.add_parser("list", help="table of ops × backends × variants with availability")
    filters(p)
    p = sub.add_parser("check", help="cross-check variants against the specs with Hypothesis")
    filters(p)
    p.add_argument("--profile", default="ci", choices=list(PROFILES), help="Hypothesis profile (default ci)")
    p.add_argument("--examples", type=_count("--examples", 1, MAX_EXAMPLES),
                   help=f"examples per variant, 1 to {MAX_EXAMPLES} (overrides the profile)")
    p.add_argument("--seed", type=int, help="Hypothesis seed, for a reproducible run")
    p.add_argument("--timeout", type=_seconds("--timeout", zero_ok=False),
                   help="seconds one example may run before it counts as a hang")
    p.add_argument("--hang-shrink", type=_seconds("--hang-shrink", zero_ok=True), metavar="SECONDS",
                   help="time allowed to shrink each hanging or crashing case from outside the worker "
                        "(default: 4 × the timeout; 0 keeps the case as found)")
    p.add_argument("--jobs", "-j", type=_count("--jobs", 0), default=0,
                   help="worker processes (default 0: the number of CPUs); never more than the variants to check")
    p.add_argument("--database", help="Hypothesis example database: a directory, redis://..., or none "
                                      "(default .refconv/hypothesis, env REFCONV_DATABASE)")
    p.add_argument("--failures-dir", default=os.environ.get("REFCONV_FAILURES", ".refconv/failures"),
                   help="where minimised reproducers are saved (default .refconv/failures)")
    p.add_argument("--no-save", action="store_true", help="do not save reproducer files")
    p.add_argument("--json", help="write a JSON report to this file ('-': to stdout; the matrix and "
                                  "everything else then go to stderr)")
    p.add_argument("--junit", help="write a JUnit XML report to this file")
    p.add_argument("--quiet", "-q", action="store_true", help="no live progress bar")
    p.add_argument("--shard", metavar="K/N", help="check only shard K of N of the selected variants (a stable "
                                                  "split by a hash of the variant id; join with refconv merge)")
    p.add_argument("--tolerance", choices=TOLERANCES, default=None, help=TOLERANCE_HELP)
    p = sub.add_parser("repro", help="replay a saved reproducer file and print the diff")
    p.add_argument("file")
    p.add_argument("--params", help="override launch params, e.g. 'bx=8 by=4'")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds the replay may run before it counts as a hang (default 60)")
    p.add_argument("--tolerance", choices=TOLERANCES,
                   default=None,
                   help="float verdict of the replay (default: env REFCONV_TOLERANCE, else the one the "
                        "reproducer recorded, else proven)")
    _add_backend_options(p)
    p = sub.add_parser("merge", help="join the JSON reports of refconv check --shard runs into one report")
    p.add_argument("reports", nargs="+", metavar="REPORT.json")
    p.add_argument("--json", help="write the merged JSON report to this file ('-': to stdout; the "
                                  "matrix then goes to stderr)")
    p.add_argument("--junit", help="write the merged JUnit XML report to this file")
    sub.add_parser("specs", help="list the reference specs")
    try:
        from .bench.args import add_parser as add_bench
        from .bench.args import add_report_parser
        add_bench(sub, filters)
        add_report_parser(sub)
    except ImportError:
        pass
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    ns = ap.parse_args(argv)
    ns.argv = argv
    if ns.cmd is None:
        ap.print_help()
        return 0
    handler = {"list": cmd_list, "check": cmd_check, "repro": cmd_repro, "specs": cmd_specs,
               "merge": cmd_merge}.get(ns.cmd)
    if handler is None:
        handler = _bench_handler
    from .procs import Terminated, sigterm_as_interrupt
    try:
        with sigterm_as_interrupt():
            return handler(ns)
    except Terminated:  # SIGTERM (kill, docker stop, a CI cancel): as Ctrl-C, status 143
        return interrupted(terminated=True)
    except UsageError as e:
        err_console.print(f"refconv {ns.cmd}: {esc(e)}")
        return 2
    except (ValueError, KeyError, FileNotFoundError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        err_console.print(f"[red]refconv {ns.cmd}: {esc(msg)}[/]")
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the workers are already killed (refconv.pool); one line, status 130
        return interrupted()


def _bench_handler(ns) -> int:
    """``refconv bench`` / ``bench-report``: the one typed options object, built from ``ns`` by
    field name (:mod:`refconv.bench.args` names each option after its field); nothing else of
    ``ns`` enters the bench but the session."""
    import dataclasses

    from .bench import BenchOptions, ReportOptions, cmd_bench, cmd_bench_report
    cls = ReportOptions if ns.cmd == "bench-report" else BenchOptions
    opts = cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})
    return cmd_bench_report(opts) if ns.cmd == "bench-report" else cmd_bench(opts, session_from(ns))


def interrupted(terminated: bool = False) -> int:
    """Report a Ctrl-C (``refconv: interrupted``, exit status 130 = 128 + SIGINT) or a SIGTERM
    (``refconv: terminated``, 143 = 128 + SIGTERM) in one line on stderr.  A second Ctrl-C while
    this is printed is ignored."""
    import signal
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        try:
            sys.stdout.flush()
        except OSError:   # stdout closed or a broken pipe: the line on stderr still says it
            pass
        print(f"refconv: {'terminated' if terminated else 'interrupted'}", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, old)
    return 143 if terminated else 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
