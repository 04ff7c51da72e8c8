"""``refconv bench``: kernel time of each selected variant from device events, next to its
end-to-end time, the peers (library calls) measured in the same run, and the memory roofline.

The method (see docs/performance.md):

* Problems: ``--preset NAME`` (the seed studies' sizes, :mod:`refconv.presets`), or one small
  problem per op (``--scale small``, default; fits the simulators) or ``--scale paper``.
* Each variant first runs once untimed, and that result is checked against the spec like any
  example (a variant that fails is reported, not timed); this run also compiles the kernels and
  warms the caches, so compile time stays out of the timings.
* Then ``--repeat`` timed runs.  In each, the backend records a device interval around each of
  its launches (:mod:`refconv.timing`: CUDA events, OpenCL profiling events), after overwriting
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
  a variant id, ``spec``, or ``auto`` (a sensible peer per op).
* Roofline (:mod:`refconv.roofline`): minimum bytes and FLOPs per problem; the copy bandwidth
  of each device is measured in the same run (``Backend.bench.copy``: device-to-device; the host
  memcpy for CPU rows; torch's copy for GPU peers); ``% roofline`` = memory-bound floor / time.
* The JSON and Markdown are rewritten after every problem (a run stopped by a time limit keeps
  what it finished); ``refconv bench-report`` merges the reports of runs that split the problems.
* Rows whose device is simulated (the CUDA simulator, Oclgrind) are checked, timed once and
  labelled: their times mean nothing.  A preset or ``--scale paper`` (GPU sizes) skips them,
  saying what it needs.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import ops
from . import peers as peers_mod
from . import roofline
from .bench_rows import RowOptions, fits, measure, summary  # noqa: F401  (refconv.bench.measure, ...)
from .bench_worker import DEFAULT_TIMEOUT, RowTask, Rows, WorkerRows
from .console import console
from .errors import UsageError
from .problem import Problem
from .session import Session

class _ScaleView(Mapping):
    """scale -> op -> one view of the op records' ``bench`` problems (read when used)."""

    def __init__(self, item):
        self._item = item

    def _table(self) -> dict:
        out: dict = {}
        for rec in ops.records():
            for scale, bp in rec.bench.items():
                out.setdefault(scale, {})[rec.name] = self._item(bp)
        return out

    def __getitem__(self, scale):
        return self._table()[scale]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())


#: per ``--scale`` and op: the dims (the op record's ``bench[scale].dims``)
DIMS: Mapping[str, dict] = _ScaleView(lambda bp: dict(bp.dims))
#: per ``--scale`` and op: ``(dims, options, fills)`` (the op record's ``bench[scale]``)
SIZES: Mapping[str, dict] = _ScaleView(lambda bp: (dict(bp.dims), dict(bp.options), dict(bp.fills)))
#: bytes of the copy that measures bandwidth: large enough to leave an H100's 50 MB L2
COPY_BYTES = 256 << 20
#: bytes a GPU backend overwrites before each timed launch (cold L2, busy device): > 2x that L2
FLUSH_BYTES = 128 << 20


def bench_problem(op: str, scale: str) -> Problem:
    if scale not in SIZES:
        raise UsageError(f"--scale {scale!r} not accepted; accepted: {', '.join(SIZES)}")
    sizes = SIZES[scale]
    if op not in sizes:
        raise UsageError(f"op {op!r} has no --scale {scale!r} problem; ops with one: {', '.join(sizes)}")
    d, o, f = sizes[op]
    return Problem(op, dict(d), dict(o), dict(f))


#: staging, comparison temporaries), whatever the size of the result
ROW_CHECK_BYTES = 1 << 30


def host_bytes_needed(problem: Problem, work: roofline.Work, variant=None) -> int:
    """Host memory the check of one variant needs, about.  Ops checked as a whole: four times
    inputs plus output (spec result, poisoned buffer, the variant's host copy, comparison
    temporaries).  Ops the checker checks by row blocks (their record has ``rows``, e.g. kron):
    no whole spec result; the variant's poisoned host output (``output="array"``; none for
    ``output="rows"``, whose sink discards the checked blocks) plus the inputs and
    :data:`ROW_CHECK_BYTES` of blocks."""
    if problem.record.rows is None:
        return 4 * work.bytes
    shape, dtype = problem.record.output_layout(problem.dims, problem.options)
    out_bytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    in_bytes = max(work.bytes - out_bytes, 0)
    held = 0 if variant is not None and variant.output == "rows" else out_bytes
    return held + in_bytes + ROW_CHECK_BYTES


def available_host_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def run_problem(name, problem, variants, ns, rows_of, only=None, big=False):
    """Rows of one problem: the spec (unless the problem is GPU-sized and the spec is not the
    baseline), each variant, each peer, each computed by ``rows_of`` (a
    :class:`refconv.bench_worker.WorkerRows` or :class:`~refconv.bench_worker.Rows`); the
    problem's :class:`roofline.Work`; and the peers listed for it (``(Peer, why)``)."""
    work = roofline.work(problem)
    host_have = available_host_bytes()
    desc = problem.descriptor()

    def too_big(variant=None):
        need = host_bytes_needed(problem, work, variant)
        if host_have is not None and need > host_have:
            return (f"checking needs about {need / 1e9:.0f} GB of host memory, "
                    f"{host_have / 1e9:.0f} GB available")
        return None

    def row(task, label):
        with console.status(f"{name}: {label}"):
            return rows_of(task)
    rows = []
    if not too_big() and (ns.baseline == "spec" or not big):
        rows.append(row(RowTask("spec", name, desc), "timing the spec"))
    for v in variants:
        rows.append(row(RowTask("variant", name, desc, v.id, too_big(v), only, big),
                        f"checking {v.id} (also its warm-up run), then timing it"))
    listed = [(_peer_named(problem.op, n), why)
              for n, why in row(RowTask("peers", name, desc, peers=ns.peers), "listing the peers")]
    for p, why in listed:
        rows.append(row(RowTask("peer", name, desc, p.name, why, host_have=host_have), f"timing peer {p.name}"))
    return rows, work, listed


def _peer_named(op: str, name: str):
    return next(p for p in peers_mod.PEERS if p.op == op and p.name == name)


def _baseline_for(op, rows, ns, listed):
    """The id of the row the ratio divides, for this problem: ``--baseline`` when it names a row of
    this op (a peer name, a variant id, ``spec``), else the op's default peer (``auto``)."""
    ids = {r["variant"] for r in rows}

    def row_of(b):
        if b == "spec":
            return f"{op}/spec"
        if f"{op}/peer/{b}" in ids:
            return f"{op}/peer/{b}"
        return b
    for b in (ns.baseline, peers_mod.default_baseline(op, listed)):
        if b != "auto" and row_of(b) in ids:
            return row_of(b)
    return None


def add_parser(sub, filters):
    p = sub.add_parser("bench", help="kernel and end-to-end time per variant, peers, roofline, plots")
    filters(p)
    p.add_argument("--preset", action="append", metavar="NAME",
                   help="a seed study's problem by name (glob, comma list, or 'all'; repeatable); "
                        "see --list-presets")
    p.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    p.add_argument("--scale", default="small", choices=list(SIZES),
                   help="without --preset: one problem per op, small (default; fits the simulators) or paper")
    p.add_argument("--repeat", type=int, default=30, help="timed runs per row, after the warm-up (default 30)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="a row's timed runs stop once they have taken this long in all (at least one run; "
                        "the table shows n where fewer than --repeat ran; default: no limit)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"each row runs in a worker process and becomes a 'hang' row after this long (default "
                        f"{DEFAULT_TIMEOUT:g}: a paper-size Kronecker row fits); a crash or error is a row too, "
                        f"and the run goes on; 0: rows in this process, no limit")
    p.add_argument("--baseline", default="auto",
                   help="row the speed-up divides: auto (a peer per op), spec, a peer name, or a variant id")
    p.add_argument("--peers", default="auto",
                   help="peers to time: auto (GPU peers, else CPU ones), all, none, or names (comma list)")
    p.add_argument("--copy-bytes", type=int, default=COPY_BYTES,
                   help=f"size of the copy that measures bandwidth (default {COPY_BYTES >> 20} MiB)")
    p.add_argument("--flush-bytes", type=int, default=FLUSH_BYTES,
                   help=f"device bytes overwritten before each timed GPU launch, so that L2 is cold and "
                        f"the host's launch overhead is not timed (default {FLUSH_BYTES >> 20} MiB; 0: off)")
    p.add_argument("--json", help="write the measurements to this JSON file")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown (for docs/performance.md)")
    p.add_argument("--plots", metavar="DIR", help="write PNG plots (time, %% roofline, coarsening curve) here")


def add_report_parser(sub):
    p = sub.add_parser("bench-report", help="merge refconv bench --json reports; write JSON, Markdown, plots")
    p.add_argument("reports", nargs="+", metavar="BENCH.json",
                   help="reports of runs that split the problems (a row measured in any of them is kept)")
    p.add_argument("--json", help="write the merged report to this JSON file")
    p.add_argument("--markdown", metavar="FILE", help="write the merged tables as Markdown")
    p.add_argument("--plots", metavar="DIR", help="write the PNG plots of the merged report here")


def cmd_bench_report(ns) -> int:
    """``refconv bench-report``: merge bench reports (:func:`bench_report.merge`), print each
    problem's table and write what was asked for."""
    from . import bench_report
    from .jsonfile import read_json
    reps = [read_json(path, "bench report") for path in ns.reports]
    rep = bench_report.merge(reps, [Path(p).name for p in ns.reports])
    for res in rep["problems"]:
        bench_report.print_problem(console, res, rep["repeat"] or 0)
        bench_report.print_twins(console, res)
    _save(ns, rep)
    if ns.plots:
        for path in bench_report.plots(rep, ns.plots):
            console.print(f"plot: {path}")
    return 0


def _check_baseline(ns, variants):
    accepted = {"auto", "spec"} | set(peers_mod.names()) | {v.id for v in variants}
    if ns.baseline not in accepted:
        raise UsageError(f"--baseline {ns.baseline!r} is not accepted; accepted: 'auto', 'spec', a peer "
                         f"({', '.join(peers_mod.names())}) or one of the selected variants "
                         f"({', '.join(v.id for v in variants)})")


def _write(ns, results, notes, bandwidth, variants) -> dict:
    """The report of the problems measured so far, written to ``--json`` and ``--markdown``."""
    from . import bench_report, registry

    def describe(b):
        return registry.backends()[b].describe()
    where = bench_report.devices({v.backend for v in variants}, describe)
    return _save(ns, bench_report.report(results, ns, notes, bandwidth, where))


def _save(ns, report: dict) -> dict:
    """Write ``report`` to ``--json`` and ``--markdown`` where asked; returns it."""
    from . import bench_report
    if ns.json:
        bench_report.write_json(ns.json, report)
    if ns.markdown:
        Path(ns.markdown).write_text(bench_report.markdown(report))
    return report


def cmd_bench(ns, session: Session) -> int:
    """``refconv bench`` with the parsed options ``ns``; ``session``: its selection and backend
    options (:func:`refconv.cli.session_from`)."""
    from . import bench_report, presets
    if ns.list_presets:
        bench_report.print_presets(console)
        return 0
    if ns.repeat < 1:
        raise UsageError(f"--repeat must be >= 1, got {ns.repeat}")
    if ns.budget is not None and not ns.budget > 0:
        raise UsageError(f"--budget must be a number of seconds > 0, got {ns.budget}")
    if ns.copy_bytes < 1:
        raise UsageError(f"--copy-bytes must be >= 1, got {ns.copy_bytes}")
    if ns.flush_bytes < 0:
        raise UsageError(f"--flush-bytes must be >= 0 (0: no flush), got {ns.flush_bytes}")
    if not ns.timeout >= 0:
        raise UsageError(f"--timeout must be a number of seconds >= 0 (0: rows in this process, no limit), "
                         f"got {ns.timeout}")
    chosen = presets.select(ns.preset) if ns.preset else None
    bopts = session.configure()
    variants = session.variants()
    _check_baseline(ns, variants)
    if chosen is not None:
        ops = {v.op for v in variants}
        problems = [(p.name, p.problem(), p.only, True) for p in chosen if p.op in ops]
        for p in chosen:
            if p.op not in ops:
                console.print(f"[yellow]note:[/] preset {p.name} left out: no selected variant is a {p.op}")
        if not problems:
            raise UsageError(f"--preset {','.join(ns.preset)}: no selected variant has the op of "
                             f"{', '.join(p.name for p in chosen)} (ops selected: {', '.join(sorted(ops))})")
    else:
        problems = [(f"{op}-{ns.scale}", bench_problem(op, ns.scale), None, ns.scale != "small")
                    for op in sorted({v.op for v in variants})]
    from .bench_rows import backend_hooks
    notes = bench_report.device_notes({v.backend for v in variants}, backend_hooks)
    for n in notes:
        console.print(f"[yellow]note:[/] {n}")
    opts = RowOptions(ns.repeat, ns.flush_bytes, ns.budget, ns.copy_bytes)
    backends = sorted({v.backend for v in variants})
    rows_of = (Rows(opts, backends, ns.peers) if ns.timeout == 0 else
               WorkerRows(bopts, opts, ns.timeout, backends, ns.peers))
    results, report = [], None
    try:
        for name, problem, only, big in problems:
            vs = [v for v in variants if v.op == problem.op]
            rows, work, listed = run_problem(name, problem, vs, ns, rows_of, only, big)
            base = _baseline_for(problem.op, rows, ns, listed)
            bt = next((r["median_s"] for r in rows if r["variant"] == base), None)
            for r in rows:
                r["speedup"] = (bt / r["median_s"]) if (bt and r.get("median_s")) else None
            results.append({"name": name, "problem": problem.descriptor(), "op": problem.op,
                            "work": {"bytes": work.bytes, "flops": work.flops, "intensity": work.intensity},
                            "baseline": base, "rows": rows})
            bench_report.print_problem(console, results[-1], ns.repeat)
            bench_report.print_coarsening(console, results[-1])
            bench_report.print_twins(console, results[-1])
            # written after every problem: a run stopped part-way (a time limit) keeps what it measured
            report = _write(ns, results, notes, rows_of.measured(), variants)
    finally:
        rows_of.close()
    if ns.plots:
        for path in bench_report.plots(report, ns.plots):
            console.print(f"plot: {path}")
    return 0
