"""``refconv bench`` output: the terminal tables, the JSON report and the PNG plots.

Plots (``--plots DIR``), one set per problem:

* ``time_<problem>.png``: the main time of every timed row (kernel median, else end-to-end), with
  its interquartile range, variants and peers in different colours, log scale;
* ``roofline_<problem>.png``: % of the memory roofline of every row that has one;
* ``coarsening_<problem>.png``, when variants named ``{GM,CM,SM}[_CF{k}][_Vec]`` (seed 000's
  naming) were timed: kernel time against the coarsening factor, one line per memory kind, vector
  stores or not, and backend -- seed 000's Çizelge 4-5 as a curve.
"""
from __future__ import annotations

import datetime
import platform
import re
from pathlib import Path

from .. import jsonfile
from ..errors import UsageError
from .row import Row

STYLE = {"variant": "", "peer": "cyan", "spec": "dim", "copy": "magenta"}
#: the peers' libraries, whose versions the report records beside the backends' (``Backend.versions``)
PEER_MODULES = ("torch", "cupy", "cv2", "scipy")
_CF_NAME = re.compile(r"^(GM|CM|SM)(?:_CF(\d+))?(_Vec)?$")


def fmt_s(s: float | None) -> str:
    if s is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(s) >= f:
            return f"{s / f:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_stat(st: dict | None, repeat: int | None = None) -> str:
    """``median [q1–q3]``, with ``(n=K)`` when K runs differ from the ``repeat`` asked for
    (``--budget`` stopped the row early)."""
    if not st:
        return "-"
    n = f" (n={st['n']})" if repeat is not None and st.get("n", repeat) != repeat else ""
    return f"{fmt_s(st['median'])} [{fmt_s(st['q1'])}–{fmt_s(st['q3'])}]{n}"


def print_presets(console) -> None:
    from rich.table import Table

    from .presets import PRESETS
    t = Table(title="refconv bench presets (--preset NAME, globs, or all)",
              caption="source: the study the sizes come from (the seed studies, docs/backends.md) and its table")
    for c in ("preset", "op", "problem", "source", "note"):
        t.add_column(c)
    for p in PRESETS.values():
        dims = " ".join(f"{k}={v}" for k, v in p.dims.items())
        t.add_row(p.name, p.op, dims, p.source, p.note + (f" (only {p.only})" if p.only else ""))
    console.print(t)


def device_notes(backends, hooks_of) -> list[str]:
    """One line per selected backend whose device is simulated, plus what a real run needs."""
    notes = []
    for b in sorted(backends):
        h = hooks_of(b)
        try:
            why = h.simulated() if h else None
        except Exception as e:  # never let a probe stop the bench
            why = f"{b}: simulated() failed: {type(e).__name__}: {e}"
        if why:
            notes.append(why)
    if notes:
        from ..registry import real_target
        hints = "; ".join(f"{b}: {real_target(b)}" for b in sorted(backends) if real_target(b))
        notes.append("kernel times need a real target" + (f" ({hints})" if hints else "")
                     + "; simulated rows are labelled and have no time, ratio or roofline")
    return notes


def print_problem(console, res: dict, repeat: int) -> None:
    from rich.table import Table
    w = res["work"]
    t = Table(title=f"{res['name']}: {res['problem']}\nminimum {w['bytes'] / 1e6:.4g} MB moved, "
                    f"{w['flops'] / 1e6:.4g} MFLOP; median [IQR] of {repeat} runs after a warm-up (n=K: fewer, "
                    f"--budget); "
                    f"speed-up = {res['baseline'] or 'no baseline'} / row; × copy = row / {res.get('op') or 'op'}/copy")
    for c in ("variant / peer", "kernel", "end-to-end", "timer", "% roofline", "× copy", "speed-up", "status"):
        t.add_column(c)
    for r in res["rows"]:
        pct = r.roofline_pct
        sp = r.speedup
        st = STYLE.get(r.kind, "")
        name = r.id if not st else f"[{st}]{r.id}[/]"
        sim = r.timer == "simulated"
        t.add_row(name, fmt_stat(r.kernel_s, repeat) if not sim else "(simulated)",
                  fmt_stat(r.e2e_s, 1 if sim else repeat), r.timer or "-", f"{pct:.3g} %" if pct else "-",
                  fmt_copy_ratio(r), f"{sp:.3g}×" if sp else "-", r.status[:160])
    console.print(t)


def fmt_copy_ratio(r: Row) -> str:
    """The ``× copy`` cell: the row's time over the copy floor's (``-`` where there is none); the
    copy row itself shows how many bytes its copy moved."""
    if r.kind == "copy" and r.bytes is not None and r.median_s:
        return f"{r.bytes / 1e6:.4g} MB moved"
    return f"{r.copy_ratio:.3g}×" if r.copy_ratio else "-"


def twins(rows) -> list[dict]:
    """Variants of the same op and name timed on two or more backends, whichever backends those
    are (the table's columns are the backends found): ``[{"name", "times": {backend: seconds},
    "ratio": slowest / fastest}]``, sorted by op, then name.  Where a twin's call launched more
    than one kernel and its time is their sum (a device time, not a host clock's), also
    ``"launches": {backend: n}`` and ``"per_launch": {backend: seconds / n}`` for those backends:
    a host loop of many small launches measures the launch API as much as the kernel, and the
    time a launch sets against the fixed cost of one (printed with the bandwidth)."""
    by_name: dict = {}
    for r in rows:
        if r.kind == "variant" and r.median_s:
            by_name.setdefault((r.op, r.name), {})[r.backend] = r
    out = []
    for (_, n), got in sorted(by_name.items()):
        if len(got) < 2:
            continue
        t = {b: r.median_s for b, r in got.items()}
        x = {"name": n, "times": t, "ratio": max(t.values()) / min(t.values())}
        many = {b: r.launches for b, r in got.items() if r.launches and r.launches > 1 and r.kernel_s}
        if many:
            x["launches"] = many
            x["per_launch"] = {b: t[b] / k for b, k in many.items()}
        out.append(x)
    return out


def fmt_twin(x: dict, backend: str) -> str:
    """A twins-table cell: the backend's time, and where its call launched ``n`` kernels, ``n × ``
    the time a launch."""
    t = x["times"].get(backend)
    n = (x.get("launches") or {}).get(backend)
    return fmt_s(t) if not n else f"{fmt_s(t)} = {n} × {fmt_s(x['per_launch'][backend])}"


def print_twins(console, res: dict) -> None:
    from rich.table import Table
    tw = twins(res["rows"])
    if not tw:
        return
    backends = sorted({b for x in tw for b in x["times"]})
    t = Table(title=f"{res['name']}: the same variant on each backend (ratio = slowest / fastest)")
    t.add_column("variant")
    for b in backends:
        t.add_column(b, justify="right")
    t.add_column("ratio", justify="right")
    for x in tw:
        t.add_row(x["name"], *(fmt_twin(x, b) for b in backends), f"{x['ratio']:.3g}×")
    console.print(t)


def print_coarsening(console, res: dict) -> None:
    """Seed 000's Çizelge 4-5 layout: one line per (backend, memory kind, vector stores), one
    column per coarsening factor, the main time of each timed variant."""
    from rich.table import Table
    curves = coarsening_points(res["rows"])
    if not any(len(v) > 1 for v in curves.values()):
        return
    cfs = sorted({cf for pts in curves.values() for cf, _ in pts})
    t = Table(title=f"{res['name']}: coarsening (seed 000, Çizelge 4-5), median time")
    t.add_column("kernel")
    for cf in cfs:
        t.add_column(f"CF={cf}" if cf > 1 else "no CF", justify="right")
    for (backend, mem, vec), pts in sorted(curves.items()):
        got = dict(pts)
        t.add_row(f"{backend} {mem}{'_Vec' if vec else ''}", *(fmt_s(got.get(cf)) for cf in cfs))
    console.print(t)


def devices(backends, describe_of) -> dict:
    """Where each selected backend ran (``Backend.describe()``) and the peers' GPU (torch)."""
    out = {}
    for b in sorted(backends):
        try:
            out[b] = describe_of(b)
        except Exception as e:  # a description never stops the report
            out[b] = f"describe() failed: {type(e).__name__}: {e}"
    try:
        import torch
        if torch.cuda.is_available():
            out["peers (torch)"] = torch.cuda.get_device_name()
    except Exception:
        pass
    return out


def _derive(res: dict) -> dict:
    """Set a problem's ``twins`` and ``coarsening`` from its rows; returns it."""
    res["twins"] = twins(res["rows"])
    res["coarsening"] = [{"backend": b, "memory": m, "vec": v,
                          "points": [{"cf": cf, "seconds": t} for cf, t in pts]}
                         for (b, m, v), pts in sorted(coarsening_points(res["rows"]).items())]
    return res


def set_speedups(rows: list[Row], baseline: str | None) -> None:
    """Each row's ``speedup``: the median of the row whose id is ``baseline`` over the row's own
    (None where either is missing)."""
    bt = next((r.median_s for r in rows if r.id == baseline), None)
    for r in rows:
        r.speedup = (bt / r.median_s) if (bt and r.median_s) else None


def set_copy_ratios(rows: list[Row]) -> None:
    """Each row's ``copy_ratio``: its main time over the problem's copy row's (``op/copy``, the
    device-to-device copy of the problem's input and output bytes), for the rows timed by device
    events (a GPU's kernels and peers, the copy itself: 1); None for host-clock and simulated rows,
    and for every row where the copy was not timed.  A merged report keeps each row's ratio from its
    own run."""
    floor = next((r.median_s for r in rows if r.kind == "copy" and r.timer == "device events"), None)
    for r in rows:
        ok = floor and r.median_s and r.timer == "device events"
        r.copy_ratio = r.median_s / floor if ok else None


def flat_rows(results: list) -> list[dict]:
    """Every problem's rows in one list, as JSON, each with its problem's name (``problem``)."""
    return [{"problem": res["name"], **r.to_json()} for res in results for r in res["rows"]]


def report(results: list, opts, notes: list, bandwidth: dict, where: dict | None = None) -> dict:
    """The report of ``results`` (the problems measured so far, rows as :class:`Row`) under the
    options ``opts`` (a :class:`refconv.bench.options.BenchOptions`)."""
    import numpy
    vers = {"python": platform.python_version(), "numpy": numpy.__version__}
    from ..registry import version_modules
    for mod in version_modules() + PEER_MODULES:
        try:
            vers[mod] = __import__(mod).__version__
        except Exception:
            pass
    for res in results:
        _derive(res)
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "devices": where or {}, "versions": vers, "repeat": opts.repeat,
            "budget": opts.budget, "baseline": opts.baseline, "flush_bytes": opts.flush_bytes,
            "peers": opts.peers, "copy_bytes": opts.copy_bytes, "notes": notes,
            "bandwidth": list(v for v in bandwidth.values() if v), "problems": results, "rows": flat_rows(results)}


def merge(reports: list[dict], sources: list[str] | None = None) -> dict:
    """One report from several ``--json`` reports of runs that split the problems (a time limit per
    command): problems by name in order of first appearance; for each row id the first row that
    was timed (else the first row), so a row that failed for lack of memory in one run and was
    measured in another is the measured one.  Each kept row says which run it came from
    (``run``: the index into ``merged_from``).  Speed-ups are recomputed against each problem's
    baseline row, twins and coarsening from the merged rows; each row keeps the roofline of its
    own run (its run's copy bandwidth)."""
    if not reports:
        raise UsageError("no reports given; accepted: one or more JSON files of refconv bench --json")
    for i, rep in enumerate(reports):
        if not isinstance(rep, dict) or not isinstance(rep.get("problems"), list):
            where = sources[i] if sources else f"report {i}"
            raise UsageError(f"{where}: not a refconv bench --json report (no 'problems' list)")
    problems: dict = {}
    for i, rep in enumerate(reports):
        for res in rep["problems"]:
            got = problems.setdefault(res["name"], {**{k: v for k, v in res.items() if k != "rows"}, "rows": {}})
            for d in res["rows"]:
                r = _row_of(d, res, sources[i] if sources else f"report {i}")
                have = got["rows"].get(r.id)
                if have is None or (not have.median_s and r.median_s):
                    r.run = i
                    got["rows"][r.id] = r
    results = []
    for res in problems.values():
        rows = list(res["rows"].values())
        set_speedups(rows, res.get("baseline"))
        results.append(_derive({**res, "rows": rows}))
    first = reports[0]
    notes = list(dict.fromkeys(n for rep in reports for n in rep.get("notes", [])))
    return {"date": ", ".join(dict.fromkeys(rep.get("date", "?") for rep in reports)),
            "host": first.get("host"), "devices": first.get("devices", {}), "versions": first.get("versions", {}),
            "repeat": first.get("repeat"), "budget": first.get("budget"), "baseline": first.get("baseline"),
            "flush_bytes": first.get("flush_bytes", 0), "peers": first.get("peers"),
            "copy_bytes": first.get("copy_bytes"), "notes": notes,
            "bandwidth": [b for rep in reports for b in rep.get("bandwidth", [])],
            "merged_from": [{"source": (sources[i] if sources else None), "date": rep.get("date"),
                             "repeat": rep.get("repeat"), "budget": rep.get("budget"),
                             "flush_bytes": rep.get("flush_bytes")} for i, rep in enumerate(reports)],
            "problems": results, "rows": flat_rows(results)}


def _row_of(d, res: dict, where: str) -> Row:
    """The stored row ``d`` of problem ``res`` of the report ``where``, as a :class:`Row`."""
    try:
        return Row.from_json(d, res.get("op"))
    except (ValueError, TypeError) as e:
        raise UsageError(f"{where}: problem {res.get('name')!r}: {e}") from None


def _md_cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _flush_words(nbytes: int) -> str:
    """The header's words on the L2 flush: GPU launches only (CPU targets and simulators are never flushed)."""
    if not nbytes:
        return "no L2 flush."
    size = f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes} bytes"
    return f"an L2 flush of {size} before each timed GPU launch (none on CPU targets and simulators)."


def markdown(rep: dict) -> str:
    """The report as Markdown (for docs/performance.md): run facts, then per problem its table,
    its coarsening table and its twins table where there are any."""
    budget = f" (n=K: K runs, stopped by --budget {rep['budget']:g} s)" if rep.get("budget") else ""
    out = [f"Run of {rep['date']} on `{rep['host']}`, median [IQR] of {rep['repeat']} runs{budget} after a warm-up, "
           + _flush_words(rep.get("flush_bytes", 0)), ""]
    for i, m in enumerate(rep.get("merged_from") or []):
        out.append(f"* run {i}: {m.get('source') or '?'} of {m.get('date')} (repeat {m.get('repeat')}, "
                   f"budget {m.get('budget')}, flush {(m.get('flush_bytes') or 0) >> 20} MiB)")
    for k, v in rep.get("devices", {}).items():
        out.append(f"* {k}: {_md_cell(v)}")
    out.append("* versions: " + ", ".join(f"{k} {v}" for k, v in rep["versions"].items()))
    for b in rep["bandwidth"]:
        if b.get("bytes_per_s"):
            fixed = (f"; an empty kernel timed the same way: {fmt_s(b['fixed_s'])} (a fixed cost that every "
                     "interval of this source holds, whatever its work)") if b.get("fixed_s") else ""
            if b.get("fixed_error"):
                fixed = f"; its empty kernel could not be timed ({b['fixed_error']})"
            out.append(f"* copy bandwidth ({b['source']}): {b['bytes_per_s'] / 1e9:.4g} GB/s{fixed}")
    out += [f"* note: {_md_cell(n)}" for n in rep["notes"]]
    for res in rep["problems"]:
        w = res["work"]
        out += ["", f"### {res['name']}", "", f"`{res['problem']}`: minimum {w['bytes'] / 1e6:.4g} MB, "
                f"{w['flops'] / 1e6:.4g} MFLOP; speed-up = {res['baseline'] or 'no baseline'} / row; "
                f"× copy = row / {res.get('op') or 'op'}/copy", "",
                "| row | kernel | end-to-end | timer | % roofline | × copy | speed-up | status |",
                "|---|---|---|---|---|---|---|---|"]
        for r in res["rows"]:
            pct, sp = r.roofline_pct, r.speedup
            out.append("| " + " | ".join(_md_cell(c) for c in (
                r.id, fmt_stat(r.kernel_s, rep["repeat"]),
                fmt_stat(r.e2e_s, 1 if r.timer == "simulated" else rep["repeat"]), r.timer or "-",
                f"{pct:.3g} %" if pct else "-", fmt_copy_ratio(r), f"{sp:.3g}×" if sp else "-",
                r.status[:160] + (f" (run {r.run})" if rep.get("merged_from") and r.run is not None else ""))) + " |")
        cf = res.get("coarsening") or []
        if any(len(c["points"]) > 1 for c in cf):
            cfs = sorted({p["cf"] for c in cf for p in c["points"]})
            out += ["", "| kernel | " + " | ".join(f"CF={c}" if c > 1 else "no CF" for c in cfs) + " |",
                    "|---" * (len(cfs) + 1) + "|"]
            for c in cf:
                got = {p["cf"]: p["seconds"] for p in c["points"]}
                out.append(f"| {c['backend']} {c['memory']}{'_Vec' if c['vec'] else ''} | "
                           + " | ".join(fmt_s(got.get(x)) for x in cfs) + " |")
        tw = res.get("twins") or []
        if tw:
            backends = sorted({b for x in tw for b in x["times"]})
            out += ["", "| variant | " + " | ".join(backends) + " | slowest / fastest |",
                    "|---" * (len(backends) + 2) + "|"]
            for x in tw:
                out.append(f"| {x['name']} | " + " | ".join(fmt_twin(x, b) for b in backends)
                           + f" | {x['ratio']:.3g}× |")
    return "\n".join(out) + "\n"


def write_json(path: str, rep: dict) -> None:
    """Write ``rep`` to ``path`` atomically (:func:`refconv.jsonfile.write_json`), rows as
    :meth:`Row.to_json`."""
    jsonfile.write_json(path, rep, encode=_encode)


def _encode(obj):
    return obj.to_json() if isinstance(obj, Row) else str(obj)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def coarsening_points(rows) -> dict:
    """``{(backend, mem, vec): [(cf, seconds), ...]}`` from the timed variants named like seed 000's."""
    curves: dict = {}
    for r in rows:
        if r.kind != "variant" or not r.median_s:
            continue
        backend, name = r.backend, r.name
        m = _CF_NAME.match(name)
        if not m:
            continue
        key = (backend, m.group(1), bool(m.group(3)))
        curves.setdefault(key, []).append((int(m.group(2) or 1), r.median_s))
    return {k: sorted(v) for k, v in curves.items()}


_SIZED = re.compile(r"^(.*)-(\d+)$")


def series(rep: dict) -> dict:
    """``{prefix: {row id: [(size, seconds), ...]}}`` for problems named ``<prefix>-<number>``
    (``kron-100`` … ``kron-360``) when at least three share a prefix: each timed row's main time
    against the size."""
    by_prefix: dict = {}
    for res in rep["problems"]:
        m = _SIZED.match(res["name"])
        if m:
            by_prefix.setdefault(m.group(1), []).append((int(m.group(2)), res))
    out: dict = {}
    for prefix, items in by_prefix.items():
        if len(items) < 3:
            continue
        curves: dict = {}
        for size, res in sorted(items, key=lambda x: x[0]):
            for r in res["rows"]:
                if r.median_s:
                    curves.setdefault(r.id, []).append((size, r.median_s))
        out[prefix] = curves
    return out


def _save_fig(plt, fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def plots(rep: dict, outdir: str) -> list[str]:
    """Write the PNGs for every problem of ``rep`` into ``outdir`` (and, for a series of sizes of
    one problem, the time against the size); returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for prefix, curves in series(rep).items():
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, (row, pts) in enumerate(sorted(curves.items())):
            peer = "/peer/" in row
            ax.plot([x for x, _ in pts], [t * 1e3 for _, t in pts], marker="osD^v<>"[i % 7],
                    ls=":" if peer else "-", lw=2 if peer else 1.2, label=row)
        ax.set_yscale("log")
        ax.set_xlabel("size (the number in the problem's name)")
        ax.set_ylabel("median time (ms): kernel where recorded")
        ax.set_title(f"{prefix}-*: time against size (dotted: peers)", fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        paths.append(_save_fig(plt, fig, out / f"scaling_{_safe(prefix)}.png"))
    for res in rep["problems"]:
        timed = [r for r in res["rows"] if r.median_s]
        if not timed:
            continue
        tag = _safe(res["name"])
        fig, ax = plt.subplots(figsize=(9, max(2.5, 0.32 * len(timed) + 1)))
        ys = range(len(timed))
        meds = [r.median_s * 1e6 for r in timed]
        lo, hi = [], []
        for r, m in zip(timed, meds):
            st = r.stat
            lo.append(max(0.0, m - st["q1"] * 1e6))
            hi.append(max(0.0, st["q3"] * 1e6 - m))
        colors = [{"peer": "tab:orange", "spec": "tab:gray", "copy": "tab:green"}.get(r.kind, "tab:blue")
                  for r in timed]
        ax.barh(list(ys), meds, xerr=[lo, hi], color=colors)
        ax.set_yticks(list(ys), [r.id for r in timed], fontsize=7)
        ax.invert_yaxis()  # the table's order, top to bottom
        ax.set_xscale("log")
        ax.set_xlabel("median time (µs): kernel (device events) where recorded, else end-to-end; bars: IQR")
        ax.set_title(f"{res['name']} (blue: variants, orange: peers, gray: spec, green: the copy floor)",
                     fontsize=9)
        paths.append(_save_fig(plt, fig, out / f"time_{tag}.png"))
        roof = [r for r in timed if r.roofline_pct]
        if roof:
            fig, ax = plt.subplots(figsize=(9, max(2.5, 0.32 * len(roof) + 1)))
            ax.barh(range(len(roof)), [r.roofline_pct for r in roof],
                    color=[{"peer": "tab:orange", "copy": "tab:green"}.get(r.kind, "tab:blue") for r in roof])
            ax.set_yticks(range(len(roof)), [r.id for r in roof], fontsize=7)
            ax.invert_yaxis()
            ax.axvline(100, color="k", lw=0.8)
            ax.set_xlabel("% of the memory roofline (minimum bytes / copy bandwidth, over the time)")
            ax.set_title(res["name"], fontsize=9)
            paths.append(_save_fig(plt, fig, out / f"roofline_{tag}.png"))
        curves = coarsening_points(res["rows"])
        if any(len(v) > 1 for v in curves.values()):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            # colour: memory kind; line: vector stores (dashed) or not; marker: backend
            mems = sorted({m for _, m, _ in curves})
            backends = sorted({b for b, _, _ in curves})
            for (backend, mem, vec), pts in sorted(curves.items()):
                ax.plot([c for c, _ in pts], [t * 1e6 for _, t in pts],
                        marker="osD^v<>"[backends.index(backend) % 7], color=f"C{mems.index(mem) % 10}",
                        ls="--" if vec else "-", label=f"{backend} {mem}{'_Vec' if vec else ''}")
            ax.set_xlabel("coarsening factor CF (outputs per thread)")
            ax.set_ylabel("median time (µs)")
            ax.set_title(f"{res['name']}: coarsening (seed 000, Çizelge 4-5)", fontsize=9)
            ax.legend(fontsize=7, ncol=2)
            paths.append(_save_fig(plt, fig, out / f"coarsening_{tag}.png"))
    return paths
