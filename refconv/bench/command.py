"""``refconv bench``: kernel time of each selected variant from device events, next to its
end-to-end time, the peers (library calls) measured in the same run, and the memory roofline.

The method (see docs/performance.md):

* Problems: ``--preset NAME`` (the seed studies' sizes, :mod:`refconv.bench.presets`), or one small
  problem per op (``--scale small``, default; fits the simulators) or ``--scale paper``.
* Each variant first runs once untimed, and that result is checked against the spec like any
  example (a variant that fails is reported, not timed); this run also compiles the kernels and
  warms the caches, so compile time stays out of the timings.
* Then ``--repeat`` timed runs.  In each, the backend records a device interval around each of
  its launches (:mod:`refconv.timing`: the device's events), after overwriting
  ``--flush-bytes`` of device memory (cold L2; the device busy while the host issues the launch);
  the *kernel time* of the run is their sum.  The *end-to-end time* is the host clock around
  the whole ``Variant.run`` (transfers, allocation, launch overhead included), from separate
  plain runs (no events, no flush) when the timed runs flushed.  Each column reports the median
  and the interquartile range; ``--budget`` stops a row's timed runs once they have taken that
  long (at least one).  A backend may attach a caveat to an interval (a stream hold that timed
  out); the row's status carries it.  A variant that records no interval (a CPU backend) has only the
  end-to-end time, and the ratio and roofline use it.
* Peers (:mod:`refconv.peers`) are prepared (inputs moved, not timed), warmed up once and timed
  the same way.  ``--baseline`` picks the row the speed-up column divides: a peer name (per op),
  a variant id, ``spec``, or ``auto`` (a sensible peer per op).  On GPU-sized problems (a preset,
  ``--scale paper``) ``--peers auto`` is refused when no GPU peer can run here (it would time the
  CPU peers at GPU sizes, minutes each): ``--peers all``, names or ``none`` say what to time.
* Roofline (:mod:`refconv.bench.roofline`): minimum bytes and FLOPs per problem; the copy bandwidth
  of each device is measured in the same run (``Backend.bench.copy``: device-to-device; the host
  memcpy for CPU rows; torch's copy for GPU peers); ``% roofline`` = memory-bound floor / time.
* The copy floor (:func:`refconv.bench.rows.copy_row`): per problem, a device-to-device copy that
  moves its input plus output bytes, timed as a variant is; ``× copy`` = a device row's time over it.
* The JSON and Markdown are rewritten after every row (a run stopped by a time limit keeps
  what it finished; a problem cut short has no speed-ups); ``refconv bench-report`` merges the reports of runs that split the problems.
* Rows whose device is simulated (``Target.simulated``) are checked, timed once and
  labelled: their times mean nothing.  A preset or ``--scale paper`` (GPU sizes) skips them,
  saying what it needs.
"""
from __future__ import annotations

from pathlib import Path

from .. import peers as peers_mod
from ..console import console
from ..errors import UsageError
from ..session import Session
from . import presets, problems, roofline
from . import report as bench_report
from .options import BenchOptions, ReportOptions
from .row import Row
from .rows import backend_hooks
from .worker import RowTask, Rows, WorkerRows


def run_problem(name, problem, variants, opts: BenchOptions, rows_of, only=None, big=False, done=None):
    """Rows of one problem: the spec (unless the problem is GPU-sized and the spec is not the
    baseline), the copy floor, each variant, each peer, each computed by ``rows_of`` (a
    :class:`refconv.bench.worker.WorkerRows` or :class:`~refconv.bench.worker.Rows`); the
    problem's :class:`roofline.Work`; and the peers listed for it (``(Peer, why)``).  ``done``
    (optional) is called with the rows and the work after every row."""
    work = roofline.work(problem)
    host_have = problems.available_host_bytes()
    desc = problem.descriptor()

    def too_big(variant=None):
        need = problems.host_bytes_needed(problem, work, variant)
        if host_have is not None and need > host_have:
            return (f"checking needs about {need / 1e9:.0f} GB of host memory, "
                    f"{host_have / 1e9:.0f} GB available")
        return None

    rows = []

    def row(task, label):
        with console.status(f"{name}: {label}"):
            r = rows_of(task)
        if done is not None and isinstance(r, Row):
            done(rows + [r], work)
        return r
    if not too_big() and (opts.baseline == "spec" or not big):
        rows.append(row(RowTask("spec", name, desc), "timing the spec"))
    rows.append(row(RowTask("copy", name, desc), "timing a device copy of its input and output bytes"))
    for v in variants:
        rows.append(row(RowTask("variant", name, desc, v.id, too_big(v), only, big),
                        f"checking {v.id} (also its warm-up run), then timing it"))
    listed = [(_peer_named(problem.op, n), why)
              for n, why in row(RowTask("peers", name, desc, peers=opts.peers), "listing the peers")]
    for p, why in listed:
        rows.append(row(RowTask("peer", name, desc, p.name, why, host_have=host_have), f"timing peer {p.name}"))
    return rows, work, listed


def _peer_named(op: str, name: str):
    return next(p for p in peers_mod.all_peers() if p.op == op and p.name == name)


def _baseline_for(op: str, rows: list[Row], baseline: str, listed) -> str | None:
    """The id of the row the ratio divides, for this problem: ``baseline`` (``--baseline``) when it
    names a row of this op (a peer name, a variant id, ``spec``), else the op's default peer
    (``auto``)."""
    ids = {r.id for r in rows}

    def row_of(b):
        if b == "spec":
            return f"{op}/spec"
        if f"{op}/peer/{b}" in ids:
            return f"{op}/peer/{b}"
        return b
    for b in (baseline, peers_mod.default_baseline(op, listed)):
        if b != "auto" and row_of(b) in ids:
            return row_of(b)
    return None


def cmd_bench_report(opts: ReportOptions) -> int:
    """``refconv bench-report``: merge bench reports (:func:`bench_report.merge`), print each
    problem's table and write what was asked for."""
    from ..jsonfile import read_json
    reps = [read_json(path, "bench report") for path in opts.reports]
    rep = bench_report.merge(reps, [Path(p).name for p in opts.reports])
    for res in rep["problems"]:
        bench_report.print_problem(console, res, rep["repeat"] or 0)
        bench_report.print_twins(console, res)
    _save(opts, rep)
    if opts.plots:
        for path in bench_report.plots(rep, opts.plots):
            console.print(f"plot: {path}")
    return 0


def _check_baseline(baseline: str, variants) -> None:
    accepted = {"auto", "spec"} | set(peers_mod.names()) | {v.id for v in variants}
    if baseline not in accepted:
        raise UsageError(f"--baseline {baseline!r} is not accepted; accepted: 'auto', 'spec', a peer "
                         f"({', '.join(peers_mod.names())}) or one of the selected variants "
                         f"({', '.join(v.id for v in variants)})")


def _write(opts: BenchOptions, results, notes, bandwidth, variants) -> dict:
    """The report of the problems measured so far, written to ``--json`` and ``--markdown``."""
    from .. import registry

    def describe(b):
        return registry.backends()[b].describe()
    where = bench_report.devices({v.backend for v in variants}, describe)
    return _save(opts, bench_report.report(results, opts, notes, bandwidth, where))


def _save(opts: BenchOptions | ReportOptions, report: dict) -> dict:
    """Write ``report`` to ``--json`` and ``--markdown`` where asked (atomically); returns it."""
    from ..jsonfile import atomic_write
    if opts.json:
        bench_report.write_json(opts.json, report)
    if opts.markdown:
        atomic_write(opts.markdown, bench_report.markdown(report))
    return report


def _problems(opts: BenchOptions, chosen, variants) -> list[tuple]:
    """``(name, Problem, only, big)`` of each problem to run: the ``chosen`` presets whose op a
    selected variant has (a note for the others), else (``chosen`` None) one per selected op at
    ``--scale``."""
    ops_ = {v.op for v in variants}
    if chosen is None:
        return [(f"{op}-{opts.scale}", problems.bench_problem(op, opts.scale), None, opts.scale != "small")
                for op in sorted(ops_)]
    for p in chosen:
        if p.op not in ops_:
            console.print(f"[yellow]note:[/] preset {p.name} left out: no selected variant is a {p.op}")
    found = [(p.name, p.problem(), p.only, True) for p in chosen if p.op in ops_]
    if not found:
        raise UsageError(f"--preset {','.join(opts.preset)}: no selected variant has the op of "
                         f"{', '.join(p.name for p in chosen)} (ops selected: {', '.join(sorted(ops_))})")
    return found


def _result(name, problem, work, baseline, rows: list[Row]) -> dict:
    """One problem's entry of the report, its rows' speed-ups set against ``baseline`` and their
    ratios to its copy row."""
    bench_report.set_speedups(rows, baseline)
    bench_report.set_copy_ratios(rows)
    return {"name": name, "problem": problem.descriptor(), "op": problem.op,
            "work": {"bytes": work.bytes, "flops": work.flops, "intensity": work.intensity},
            "baseline": baseline, "rows": rows}


def _refuse_cpu_peers_at_gpu_sizes(opts: BenchOptions, todo, rows_of) -> None:
    """``UsageError`` when a GPU-sized problem (a preset, ``--scale paper``) would time CPU peers
    because ``--peers auto`` finds no GPU peer that can run here (no GPU): minutes of CPU time per
    problem that nobody asked for.  ``--peers all`` (or names, or ``none``) says what to time."""
    if opts.peers != "auto":
        return
    cpu, gpu_why = {}, {}
    for name, problem, _only, big in todo:
        if not big or problem.op in cpu:
            continue
        listed = rows_of(RowTask("peers", name, problem.descriptor(), peers="auto"))
        ok = [n for n, why in listed if why is None]
        devices = {n: _peer_named(problem.op, n).device for n, _ in listed}
        if any(devices[n] == "gpu" for n in ok):
            continue
        cpu[problem.op] = [n for n in ok if devices[n] == "cpu"]
        gpu_why.update({n: why for n, why in listed if devices[n] == "gpu"})
    timed = [n for names in cpu.values() for n in names]
    if not timed:
        return
    asked = f"--preset {','.join(opts.preset)}" if opts.preset else f"--scale {opts.scale}"
    why = "; ".join(dict.fromkeys(gpu_why.values())) or "no GPU peer declared"
    raise UsageError(f"{asked}: GPU-sized problems, and no GPU peer can run here ({why}), so --peers auto would "
                     f"time the CPU peers ({', '.join(sorted(set(timed)))}) at GPU sizes, minutes each; accepted: "
                     f"--peers all to time them anyway, --peers none or a comma list of peer names, or "
                     f"--scale small without --preset")


def cmd_bench(opts: BenchOptions, session: Session) -> int:
    """``refconv bench`` with the options ``opts``; ``session``: its selection and backend
    options (:func:`refconv.cli.session_from`)."""
    if opts.list_presets:
        bench_report.print_presets(console)
        return 0
    chosen = presets.select(list(opts.preset)) if opts.preset else None   # before any backend loads
    bopts = session.configure()
    variants = session.variants()
    _check_baseline(opts.baseline, variants)
    todo = _problems(opts, chosen, variants)
    for op in sorted({p.op for _, p, _, _ in todo}):
        peers_mod.named(op, opts.peers)         # an unknown --peers name: exit 2 before any worker starts
    backends = sorted({v.backend for v in variants})
    rows_of = (Rows(opts.rows(), backends, opts.peers) if opts.timeout == 0 else
               WorkerRows(bopts, opts.rows(), opts.timeout, backends, opts.peers))
    try:
        _refuse_cpu_peers_at_gpu_sizes(opts, todo, rows_of)
    except BaseException:
        rows_of.close()
        raise
    notes = bench_report.device_notes(backends, backend_hooks)
    for n in notes:
        console.print(f"[yellow]note:[/] {n}")
    results, report = [], None

    def partial(name, problem):
        """Writes the report with this problem's rows so far (a run stopped part-way by a time
        limit keeps every finished row, also of a problem whose rows take minutes each)."""
        def write(rows, work):
            _write(opts, results + [_result(name, problem, work, None, list(rows))], notes,
                   rows_of.measured(), variants)
        return write
    try:
        for name, problem, only, big in todo:
            vs = [v for v in variants if v.op == problem.op]
            rows, work, listed = run_problem(name, problem, vs, opts, rows_of, only, big,
                                             done=partial(name, problem) if opts.json or opts.markdown else None)
            base = _baseline_for(problem.op, rows, opts.baseline, listed)
            results.append(_result(name, problem, work, base, rows))
            bench_report.print_problem(console, results[-1], opts.repeat)
            bench_report.print_coarsening(console, results[-1])
            bench_report.print_twins(console, results[-1])
            # the whole problem with its baseline and speed-ups
            report = _write(opts, results, notes, rows_of.measured(), variants)
    finally:
        rows_of.close()
    if opts.plots:
        for path in bench_report.plots(report, opts.plots):
            console.print(f"plot: {path}")
    return 0
