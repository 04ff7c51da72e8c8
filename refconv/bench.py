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

import fnmatch
import statistics
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import ops
from . import peers as peers_mod
from . import roofline, timing
from .console import console
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
        raise ValueError(f"--scale {scale!r} not accepted; accepted: {', '.join(SIZES)}")
    sizes = SIZES[scale]
    if op not in sizes:
        raise ValueError(f"op {op!r} has no --scale {scale!r} problem; ops with one: {', '.join(sizes)}")
    d, o, f = sizes[op]
    return Problem(op, dict(d), dict(o), dict(f))


def fits(variant, problem: Problem) -> str | None:
    """Why ``problem`` is outside ``variant``'s declared support, or None."""
    from .variant import Range
    for k, dom in variant.supports.items():
        if k.startswith("fill."):
            continue
        if k not in problem.dims and k not in problem.options:
            continue
        val = problem.dims.get(k, problem.options.get(k))
        if isinstance(dom, Range):
            if val not in dom:
                return f"{k}={val} outside {dom}"
        elif val not in tuple(dom):
            return f"{k}={val!r} not in {tuple(dom)}"
    return None


#: host memory for the row blocks of a row-checked op (the checker's spec rows, the variant's
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


# ----------------------------------------------------------------------------- statistics

def summary(xs: list[float]) -> dict | None:
    """Median, quartiles, min, max and count of ``xs`` (None when empty)."""
    if not xs:
        return None
    s = sorted(xs)
    if len(s) >= 2:
        q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
    else:
        q1 = q3 = s[0]
    return {"median": statistics.median(s), "q1": q1, "q3": q3, "min": s[0], "max": s[-1], "n": len(s)}


def measure(run, repeat: int, flush_bytes: int = 0, budget_s: float | None = None) -> dict:
    """Time ``run()``: ``repeat`` calls each inside a :func:`timing.collect` (``flush_bytes``: the
    L2 flush before each launch) give the kernel time (sum of the recorded intervals; None when
    none were recorded); the end-to-end time is the host clock around each call.  When intervals
    were recorded with a flush, the end-to-end times come from as many further plain calls
    (no events, no flush: what a user's call costs).  ``budget_s`` (``--budget``): stop starting
    calls once the timed calls have taken that long in all (at least one call; each summary's
    ``n`` says how many ran).  Returns both summaries and whether any interval was simulated."""
    kern, e2e, simulated, caveats = [], [], False, {}
    spent = 0.0
    for _ in range(repeat):
        with timing.collect(flush_bytes) as iv:
            t0 = time.perf_counter()
            run()
            e2e.append(time.perf_counter() - t0)
        spent += e2e[-1]
        simulated |= iv.simulated
        k = iv.total()
        if k is not None:
            kern.append(k)
        for why, n in iv.caveats().items():
            caveats[why] = caveats.get(why, 0) + n
        if budget_s is not None and spent >= budget_s:
            break
    if kern and flush_bytes and not simulated:
        runs, e2e = len(e2e), []
        for _ in range(runs):
            t0 = time.perf_counter()
            run()
            e2e.append(time.perf_counter() - t0)
    out = {"kernel_s": summary(kern), "e2e_s": summary(e2e), "simulated": simulated}
    if caveats:  # the backend says some intervals may hold more than the device's work
        out["caveats"] = caveats
    return out


def _status(m: dict) -> str:
    """``ok``, or ``ok`` with the backend's caveats about the intervals and how many they concern."""
    cav = m.get("caveats") or {}
    return "ok" + "".join(f"; caveat ({n} intervals): {why}" for why, n in cav.items())


# ----------------------------------------------------------------------------- the run

def _backend_hooks(name: str):
    from . import registry
    b = registry.backends().get(name)
    return getattr(b, "bench", None)


class _Bandwidth:
    """Copy bandwidth per device, measured once per run (bytes/s, with how it was measured)."""

    def __init__(self, nbytes: int, repeat: int):
        self.nbytes, self.repeat, self.cache = nbytes, repeat, {}
        self.device_sources: list = []       # (key, make) of every GPU copy this run can measure

    def device_best(self, key: str, make) -> dict | None:
        """The hardware limit for a GPU row: the fastest device-to-device copy measured in this
        run over every GPU source (the backends' and the GPU peers'), so one backend's slower
        copy path (numba-cuda's ``copy_to_device`` reaches about half of what the OpenCL and torch
        copies do on an H100) does not inflate its own kernels' roofline.  Falls back to ``key``."""
        got = [self.get(k, m) for k, m in [(key, make)] + [x for x in self.device_sources if x[0] != key]]
        ok = [g for g in got if g and g.get("bytes_per_s") and not g.get("simulated")]
        return max(ok, key=lambda g: g["bytes_per_s"]) if ok else self.get(key, make)

    def get(self, key: str, make) -> dict | None:
        if key not in self.cache:
            try:
                run = make(self.nbytes)
            except Exception as e:
                self.cache[key] = {"source": key, "error": f"{type(e).__name__}: {e}"}
                return self.cache[key]
            if run is None:
                self.cache[key] = None
                return None
            run()  # warm-up
            m = measure(run, self.repeat)
            t = (m["kernel_s"] or m["e2e_s"])["median"]
            self.cache[key] = {"source": key, "bytes": self.nbytes, "seconds": t, "simulated": m["simulated"],
                               "bytes_per_s": (2 * self.nbytes / t) if t > 0 else None}
        return self.cache[key]


def _main_seconds(row) -> float | None:
    """The time the ratio and roofline use: the kernel median, else the end-to-end median."""
    s = row.get("kernel_s") or row.get("e2e_s")
    if not s or row.get("simulated") or s["median"] <= 0:
        return None
    return s["median"]


def _finish_row(row, work, bw, timer=None):
    """Add the main time, what took it (``timer``: given, else device events when intervals were
    recorded, host clock otherwise), the roofline percentage and the bandwidth source."""
    t = row["median_s"] = _main_seconds(row)
    row["timer"] = "simulated" if row.get("simulated") else timer or (
        "device events" if row.get("kernel_s") else "host clock")
    bps = (bw or {}).get("bytes_per_s")
    row["copy"] = (bw or {}).get("source")
    ok = t and bps and not bw.get("simulated")
    row["roofline_pct"] = roofline.percent_of_roofline(work, bps, t) if ok else None
    return row


def _spec_row(problem, ns, work, bandwidth):
    """The NumPy spec timed with the host clock."""
    args, kwargs = problem.spec_args()
    fn = problem.record.spec

    def spec_run():
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        dt = time.perf_counter() - t0
        timing.record(lambda: dt, "spec")
    m = measure(spec_run, ns.repeat, budget_s=ns.budget)
    return _finish_row({"kind": "spec", "variant": f"{problem.op}/spec", "status": "ok",
                        "library": "refconv.specs (NumPy)", **m},
                       work, bandwidth.get("host", timing.host_copy), "host clock")


def _variant_row(v, name, problem, ns, work, bandwidth, skip, only, big, spec):
    """Check ``v`` on ``problem`` (also its warm-up), then time it; or say why not.  ``spec()``
    gives the problem's acceptance, computed once for all variants."""
    from .checking import check_example
    from .variant import run_variant
    row = {"kind": "variant", "variant": v.id}
    why = Session.availability(v) or fits(v, problem) or skip
    if not why and only and not fnmatch.fnmatchcase(v.name, only):
        why = f"this preset runs only variants named {only!r}"
    hooks = _backend_hooks(v.backend)
    sim = hooks.simulated() if (hooks and not why) else None
    if not why and big and sim:
        why = f"{sim}; {name} is sized for a GPU"
    if why:
        return {**row, "status": f"skipped: {why}", "median_s": None}
    params = v.default_params()
    try:
        # an op checked by row blocks (kron) never needs the whole spec result: check_example
        # computes the spec's rows itself
        acc = spec() if problem.record.rows is None else None
    except (ValueError, TypeError) as e:
        return {**row, "median_s": None, "status": f"error: the spec rejects this problem: {e}"}
    kept: dict = {}
    with console.status(f"{name}: checking {v.id} (also its warm-up run)"):
        first = check_example(v, problem, params, acc, keep=kept)
    if first.status != "pass":  # a wrong kernel's time is not a result
        return {**row, "median_s": None, "status": f"{first.status}: {first.message[:200]}"}
    # the timed runs write into the checked output buffer again (its layout is the variant's)
    try:
        with console.status(f"{name}: timing {v.id}"):
            # on a simulated device one timed run exercises the timing; more would mean nothing
            out = kept.get("out")
            fresh = out if callable(out) else (lambda: out)   # a streamed variant gets a fresh sink per run
            m = measure(lambda: run_variant(v, problem, fresh(), params), 1 if sim else ns.repeat,
                        ns.flush_bytes, ns.budget)
    except Exception as e:
        return {**row, "median_s": None, "status": f"error: {type(e).__name__}: {e}"}
    if m["simulated"]:
        m["kernel_s"] = None  # a simulator's event times are not times
    bw = None
    if m["kernel_s"] and hooks and hooks.copy:
        bw = bandwidth.device_best(f"{v.backend} device copy", hooks.copy)
    elif not m["kernel_s"]:
        bw = bandwidth.get("host", timing.host_copy)
    return _finish_row({**row, "status": _status(m), "params": params, **m}, work, bw)


def _peer_row(p, why, name, problem, ns, work, bandwidth, host_have):
    """Prepare, warm up and time one peer; or say why not."""
    row = {"kind": "peer", "variant": f"{problem.op}/peer/{p.name}", "peer": p.name, "library": p.library}
    if not why and p.device == "cpu" and host_have is not None and 2 * work.bytes > host_have:
        why = f"needs about {2 * work.bytes / 1e9:.0f} GB of host memory, {host_have / 1e9:.0f} GB available"
    if why:
        return {**row, "status": f"skipped: {why}", "median_s": None}
    run = None
    try:
        with console.status(f"{name}: timing peer {p.name}"):
            run = p.prepare(problem)
            run()  # warm-up (library plans, autotuning, caches)
            m = measure(run, ns.repeat, ns.flush_bytes, ns.budget)
    except Exception as e:
        return {**row, "status": f"skipped: {type(e).__name__}: {e}", "median_s": None}
    finally:
        del run                    # the peer's tensors, then the memory its library keeps cached
        if p.device == "gpu":
            peers_mod.release()
    gpu = p.device == "gpu"
    bw = (bandwidth.device_best("gpu peers device copy", peers_mod.gpu_copy) if gpu
          else bandwidth.get("host", timing.host_copy))
    return _finish_row({**row, "status": _status(m), **m}, work, bw, "device events" if gpu else "host clock")


def run_problem(name, problem, variants, ns, bandwidth, only=None, big=False):
    """Rows of one problem: the spec (unless the problem is GPU-sized and the spec is not the
    baseline), each variant, each peer; and the problem's :class:`roofline.Work`."""
    work = roofline.work(problem)
    host_have = available_host_bytes()

    def too_big(variant=None):
        need = host_bytes_needed(problem, work, variant)
        if host_have is not None and need > host_have:
            return (f"checking needs about {need / 1e9:.0f} GB of host memory, "
                    f"{host_have / 1e9:.0f} GB available")
        return None
    rows = []
    if not too_big() and (ns.baseline == "spec" or not big):
        rows.append(_spec_row(problem, ns, work, bandwidth))
    cache: dict = {}

    def spec():
        if "acc" not in cache:
            from .checking import acceptance_for
            with console.status(f"{name}: computing the spec's result"), np.errstate(all="ignore"):
                cache["acc"] = acceptance_for(problem)
        return cache["acc"]
    rows += [_variant_row(v, name, problem, ns, work, bandwidth, too_big(v), only, big, spec) for v in variants]
    cache.clear()
    rows += [_peer_row(p, why, name, problem, ns, work, bandwidth, host_have)
             for p, why in peers_mod.for_op(problem.op, ns.peers)]
    return rows, work


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
        raise ValueError(f"--baseline {ns.baseline!r} is not accepted; accepted: 'auto', 'spec', a peer "
                         f"({', '.join(peers_mod.names())}) or one of the selected variants "
                         f"({', '.join(v.id for v in variants)})")


def _write(ns, results, notes, bandwidth, variants) -> dict:
    """The report of the problems measured so far, written to ``--json`` and ``--markdown``."""
    from . import bench_report, registry

    def describe(b):
        return registry.backends()[b].describe()
    where = bench_report.devices({v.backend for v in variants}, describe)
    return _save(ns, bench_report.report(results, ns, notes, bandwidth.cache, where))


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
        raise ValueError(f"--repeat must be >= 1, got {ns.repeat}")
    if ns.budget is not None and not ns.budget > 0:
        raise ValueError(f"--budget must be a number of seconds > 0, got {ns.budget}")
    if ns.copy_bytes < 1:
        raise ValueError(f"--copy-bytes must be >= 1, got {ns.copy_bytes}")
    if ns.flush_bytes < 0:
        raise ValueError(f"--flush-bytes must be >= 0 (0: no flush), got {ns.flush_bytes}")
    chosen = presets.select(ns.preset) if ns.preset else None
    session.configure()
    variants = session.variants()
    _check_baseline(ns, variants)
    if chosen is not None:
        ops = {v.op for v in variants}
        problems = [(p.name, p.problem(), p.only, True) for p in chosen if p.op in ops]
        for p in chosen:
            if p.op not in ops:
                console.print(f"[yellow]note:[/] preset {p.name} left out: no selected variant is a {p.op}")
        if not problems:
            raise ValueError(f"--preset {','.join(ns.preset)}: no selected variant has the op of "
                             f"{', '.join(p.name for p in chosen)} (ops selected: {', '.join(sorted(ops))})")
    else:
        problems = [(f"{op}-{ns.scale}", bench_problem(op, ns.scale), None, ns.scale != "small")
                    for op in sorted({v.op for v in variants})]
    notes = bench_report.device_notes({v.backend for v in variants}, _backend_hooks)
    for n in notes:
        console.print(f"[yellow]note:[/] {n}")
    bandwidth = _Bandwidth(ns.copy_bytes, ns.repeat)
    for b in sorted({v.backend for v in variants}):
        hooks = _backend_hooks(b)
        if hooks and hooks.copy and not (hooks.simulated and hooks.simulated()):
            bandwidth.device_sources.append((f"{b} device copy", hooks.copy))
    if bandwidth.device_sources and ns.peers != "none":
        bandwidth.device_sources.append(("gpu peers device copy", peers_mod.gpu_copy))
    results, report = [], None
    for name, problem, only, big in problems:
        vs = [v for v in variants if v.op == problem.op]
        rows, work = run_problem(name, problem, vs, ns, bandwidth, only, big)
        listed = peers_mod.for_op(problem.op, ns.peers)
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
        report = _write(ns, results, notes, bandwidth, variants)
    if ns.plots:
        for path in bench_report.plots(report, ns.plots):
            console.print(f"plot: {path}")
    return 0
