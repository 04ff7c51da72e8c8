"""``refconv check``: select the variants, run the backends' preflight, check every runnable
variant in worker processes (:mod:`refconv.pool`), shrink the hangs and crashes
(:mod:`.shrink`), save their reproducers, print the matrix and write the reports.

Exit status: 0 every checked variant passed, 1 a variant failed or erred, 2 a usage error
(before any work), a report that could not be written, or a run in which nothing was checked.
On Ctrl-C or SIGTERM the reports of what finished are written before the interrupt goes on."""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field

from .. import registry, render
from ..console import check_progress, console, err_console
from ..errors import UsageError
from ..render import esc
from ..report import write_junit
from ..session import env_tolerance, nothing_checked, worker_count
from .common import broken_results, report_on_stdout, run_info, session_from, write_to_fd
from .shrink import shrink_hangs


def validate_outputs(ns) -> None:
    """Every output path of ``check`` (and the example database) is usable, before the run starts
    (``UsageError`` naming the option otherwise: exit 2)."""
    from ..profiles import database
    from ..report import check_output_dir, check_report_paths
    check_report_paths(ns.json, ns.junit)
    if ns.failures_dir and not ns.no_save:
        check_output_dir("--failures-dir", ns.failures_dir)
    try:   # a database spec the workers could not open (redis without the extra ...)
        db = database(ns.database)
    except ValueError as e:
        raise UsageError(f"--database: {e}") from None
    path = getattr(db, "path", None)
    if path is not None:   # a directory: Hypothesis would silently drop every example it cannot save
        try:
            check_output_dir("--database" if ns.database else (
                "REFCONV_DATABASE" if os.environ.get("REFCONV_DATABASE") else "--database (default)"), str(path))
        except UsageError as e:
            raise UsageError(f"{e}, redis://..., or none (keep no examples)") from None


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
    """``refconv check`` (see the module docstring)."""
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


@dataclass
class CheckRun:
    """One ``check`` run as its steps share it: the parsed command line, the profile, the backend
    option values, the selected variants (after ``--shard``), the shard, the results so far and
    when the checking started (for the reports of an interrupted run)."""

    ns: object
    prof: object
    bopts: dict
    variants: list
    shard_info: dict | None = None
    results: dict = field(default_factory=dict)
    t0: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    @contextlib.contextmanager
    def reports_if_interrupted(self):
        """On Ctrl-C or SIGTERM inside the block, write the ``--json`` / ``--junit`` reports of what
        finished (``results``), every other variant ``skipped`` as not finished, then re-raise."""
        try:
            yield
        except KeyboardInterrupt as e:
            from ..procs import Terminated
            from ..runner import VariantResult
            what = "SIGTERM" if isinstance(e, Terminated) else "SIGINT"
            ordered = [self.results.get(v.id) or VariantResult(v.id, "skipped", reason=f"not finished: the run "
                                                               f"was interrupted ({what})") for v in self.variants]
            self.write_reports(ordered, interrupted=what)
            raise

    def write_reports(self, ordered, interrupted=None) -> int:
        """Write ``--json`` and ``--junit`` (atomically); one that cannot be written (the disk filled
        during the run ...) is reported on stderr and does not stop the other: returns 2 then.
        ``interrupted``: the signal that stopped the run (``SIGINT``, ``SIGTERM``), recorded in the JSON."""
        from ..report import json_report, write_json
        ns, elapsed, code = self.ns, self.elapsed(), 0
        info = {**getattr(ns, "run_info", {}), "interrupted": interrupted}
        kw = dict(shard=self.shard_info, tolerance=ns.tolerance, **info)
        if ns.json == "-":
            write_to_fd(ns.stdout_fd, json_report(self.prof.name, elapsed, self.bopts, ordered, **kw))
        for flag, path, write in (("--json", ns.json if ns.json != "-" else None,
                                   lambda: write_json(ns.json, self.prof.name, elapsed, self.bopts, ordered, **kw)),
                                  ("--junit", ns.junit, lambda: write_junit(ns.junit, ordered, elapsed))):
            if not path:
                continue
            try:
                write()
            except OSError as e:
                err_console.print(f"refconv check: could not write {flag} {esc(path)}: {esc(e)}")
                code = 2
        return code


def _check(ns) -> int:
    from ..repro import save_hang_reproducers
    ns.tolerance = ns.tolerance or env_tolerance() or "proven"   # the user's setting, read once here
    session = session_from(ns)
    run = _select(ns, session)
    runnable = _runnable(run, session)
    pre = _preflight(run)
    run.t0 = time.perf_counter()
    _run_workers(run, runnable)
    hang_budget = 4 * run.prof.timeout if ns.hang_shrink is None else ns.hang_shrink
    if hang_budget > 0:
        with run.reports_if_interrupted():
            shrink_hangs(run.results, run.prof.timeout, hang_budget, run.bopts, quiet=ns.quiet, tolerance=ns.tolerance)
    elapsed = run.elapsed()
    from .. import preflight
    for vid, found in pre.items():
        if vid in run.results:
            preflight.apply(run.results[vid], found)
    save_hang_reproducers(run.results, None if ns.no_save else ns.failures_dir, run.prof.name, run.bopts,
                          ns.tolerance)
    ordered = [run.results[v.id] for v in run.variants] + broken_results(session)
    render.print_matrix(console, ordered, elapsed, asked=run.prof.max_examples)
    code = 1 if any(r.status in ("fail", "error") for r in ordered) else 0
    code = max(code, run.write_reports(ordered))
    if code == 0 and not (run.shard_info and not run.variants):   # an empty shard checked nothing, by design
        nothing = nothing_checked([run.results[v.id] for v in run.variants], pre)
        if nothing:
            err_console.print(f"refconv check: {esc(nothing)}")
            return 2
    return code


def _select(ns, session) -> CheckRun:
    """Configure the backends and the float verdict, check the outputs and the selection (usage
    errors before any work) and apply ``--shard``."""
    bopts = session.configure()
    prof = session.profile()
    session.apply_tolerance()
    validate_outputs(ns)
    variants = session.variants()
    problems = session.blocking_problems(variants)
    if problems:
        raise UsageError("\n".join(problems))
    for line in session.unused_options(variants):
        err_console.print(f"refconv check: warning: {esc(line)}")
    shard_info = None
    if ns.shard:
        from .. import shard
        k, n = shard.parse_shard(ns.shard)
        shard_info = {"k": k, "n": n, "of": len(variants)}
        variants = shard.select(variants, k, n)
        console.print(f"shard {k}/{n}: {len(variants)} of {shard_info['of']} selected variants")
    return CheckRun(ns, prof, bopts, variants, shard_info)


def _runnable(run: CheckRun, session) -> list:
    """The variants that can run here; every other one gets its ``unavailable`` result.  A profile
    of real targets only with nothing to run is a usage error naming the first refusal."""
    from ..runner import VariantResult
    runnable = []
    for v in run.variants:
        why = session.availability(v) or registry.simulated_reason(v, run.prof)
        if why is None:
            runnable.append(v)
        else:
            run.results[v.id] = VariantResult(v.id, "unavailable", reason=why)
    if run.prof.real_targets_only and not runnable:
        refused = [run.results[v.id].reason for v in run.variants if registry.simulated_reason(v, run.prof)]
        if refused:
            raise UsageError(refused[0])
    return runnable


def _preflight(run: CheckRun) -> dict:
    """The backends' preflight (e.g. the compile check) over every selected variant: see
    :mod:`refconv.preflight`; returns its findings by variant id."""
    from .. import preflight
    run.t0 = time.perf_counter()
    with run.reports_if_interrupted(), console.status("preflight") as st:
        pre = preflight.run(run.variants, run.bopts, on_backend=lambda name, n: st.update(
            f"{esc(name)}: preflight of {n} variants"))
    if pre:
        console.print(f"preflight of {len(pre)} variants done in {run.elapsed():.1f}s")
    return pre


def _run_workers(run: CheckRun, runnable: list) -> None:
    """Check ``runnable`` in worker processes with live progress; each result lands in
    ``run.results`` as it comes (for the reports of an interrupted run)."""
    from ..pool import Job, run_jobs
    ns, prof = run.ns, run.prof
    failures_dir = None if ns.no_save else ns.failures_dir
    jobs = [Job(v.id, prof.name, ns.examples, ns.seed, ns.database, failures_dir, tolerance=ns.tolerance)
            for v in runnable]
    progress = check_progress(ns.quiet)
    with progress:
        on_event = _progress_events(run, progress, len(jobs))
        if jobs:
            with run.reports_if_interrupted():
                run.results.update(run_jobs(jobs, workers=worker_count(ns.jobs, len(jobs)), timeout=prof.timeout,
                                            backend_options=run.bopts, on_event=on_event))


def _progress_events(run: CheckRun, progress, n_jobs: int):
    """The ``on_event`` of :func:`refconv.pool.run_jobs` for ``progress``: a bar per running
    variant, the overall bar, and one line per result (its time measured here when the worker
    was killed or died)."""
    prof = run.prof
    total = progress.add_task(f"checking {n_jobs} variants ({prof.name}, {prof.max_examples} ex.)",
                              total=n_jobs, status="")
    tasks: dict = {}
    started: dict[str, float] = {}

    def on_event(kind, vid, payload):
        if kind in ("plan", "start") and vid not in tasks:
            started.setdefault(vid, time.perf_counter())
            tasks[vid] = progress.add_task(f"  {esc(vid)}", total=prof.max_examples, status="")
        if kind == "plan":       # the directed cases come before the drawn examples: count them too
            progress.update(tasks[vid], total=payload[0])
        if kind == "done":
            progress.advance(tasks[vid])
        if kind == "result":
            r = payload
            run.results[vid] = r    # what finished, for the reports of an interrupted run
            if not r.seconds and vid in started:   # killed (hang) or died: the time it really took
                r.seconds = time.perf_counter() - started[vid]
            if vid in tasks:
                progress.update(tasks[vid], visible=False)
            progress.advance(total)
            progress.console.print(render.result_line(r))
    return on_event
