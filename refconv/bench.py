"""``refconv bench``: median wall time of each selected variant on one fixed problem per op, and
its ratio to a peer measured in the same run (``--baseline``: a variant id, or ``spec`` for the
NumPy specification).

Times are of ``Variant.run`` as a user calls it (host arrays in, host array out), so GPU variants
include their transfers.  Each variant first runs once untimed on the bench problem, and that
result is checked against the spec like any example (a variant that fails is reported, not
timed); the run also warms up compilation and caches.  Sizes:
``--scale small`` (fits the simulators), ``--scale paper`` (the seed studies' sizes, for a GPU).
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np

from .problem import Problem

#: per op: options and fills (the same at every scale)
_OPTIONS = {
    "filter2d": ({"boundary": "valid", "flip": False, "accumulator": "int", "shift": 4, "cast": "wrap"},
                 {"image": "random.1", "weights": "exact.2"}),
    "sobel": ({"magnitude": "l1", "boundary": "valid", "out_dtype": "uint8", "cast": "saturate", "rounding": "trunc"},
              {"image": "random.1"}),
    "matvec": ({}, {"m": "random.1", "v": "random.2"}),
    "kron": ({}, {"a": "random.1", "b": "random.2"}),
    "conv2d": ({"stride": 1, "padding": 0, "dilation": 1}, {"x": "random.1", "w": "random.2"}),
}
#: per scale and op: the dims; the paper sizes follow the seed studies' tables
DIMS = {
    "small": {
        "filter2d": {"dtype": "uint8", "c": 0, "h": 64, "w": 64, "kh": 3, "kw": 3},
        "sobel": {"dtype": "uint8", "channels": 4, "h": 64, "w": 64},
        "matvec": {"dtype": "float32", "rows": 128, "cols": 128},
        "kron": {"dtype": "float64", "m": 8, "n": 8, "p": 8, "q": 8},
        "conv2d": {"dtype": "float32", "n": 1, "c": 4, "h": 16, "w": 16, "m": 4, "r": 3, "s": 3, "groups": 1,
                   "bias": 0},
    },
    "paper": {
        "filter2d": {"dtype": "uint8", "c": 0, "h": 3072, "w": 3072, "kh": 3, "kw": 3},
        "sobel": {"dtype": "uint8", "channels": 4, "h": 2048, "w": 2048},
        "matvec": {"dtype": "float32", "rows": 8192, "cols": 8192},
        "kron": {"dtype": "float64", "m": 64, "n": 64, "p": 64, "q": 64},
        "conv2d": {"dtype": "float32", "n": 1, "c": 64, "h": 56, "w": 56, "m": 64, "r": 3, "s": 3, "groups": 1,
                   "bias": 0},
    },
}
SIZES = {scale: {op: (d, *_OPTIONS[op]) for op, d in ops.items()} for scale, ops in DIMS.items()}


def bench_problem(op: str, scale: str) -> Problem:
    if scale not in SIZES:
        raise ValueError(f"--scale {scale!r} not accepted; accepted: {', '.join(SIZES)}")
    d, o, f = SIZES[scale][op]
    return Problem(op, dict(d), dict(o), dict(f))


def fits(variant, problem: Problem) -> str | None:
    """Why ``problem`` is outside ``variant``'s declared support, or None."""
    from .variant import Range
    for k, dom in variant.supports.items():
        if k.startswith("fill."):
            continue
        val = problem.dims.get(k, problem.options.get(k))
        if k not in problem.dims and k not in problem.options:
            continue
        if isinstance(dom, Range):
            if val not in dom:
                return f"{k}={val} outside {dom}"
        elif val not in tuple(dom):
            return f"{k}={val!r} not in {tuple(dom)}"
    return None


def time_call(fn, repeat: int, warmup: bool = True) -> list[float]:
    if warmup:
        fn()  # compilation, caches
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def add_parser(sub, filters):
    p = sub.add_parser("bench", help="median time per variant and ratio to a peer in the same run")
    filters(p)
    p.add_argument("--scale", default="small", choices=list(SIZES), help="problem sizes (default small)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per variant (median reported)")
    p.add_argument("--baseline", default="spec", help="peer for the ratio: 'spec' or a variant id")
    p.add_argument("--json", help="write the measurements to this JSON file")
    p.add_argument("--plot", help="write a bar chart (PNG) of the medians, needs matplotlib")


def cmd_bench(ns) -> int:
    from rich.table import Table

    from . import registry, specs
    from .checking import acceptance_for, check_example, expected_output_layout, poison_value
    from .cli import availability, configure, console, _select
    if ns.repeat < 1:
        raise ValueError(f"--repeat must be >= 1, got {ns.repeat}")
    configure(ns)
    variants = _select(ns)
    if ns.baseline != "spec" and ns.baseline not in {v.id for v in variants}:
        raise ValueError(f"--baseline {ns.baseline!r} is not one of the selected variants; accepted: 'spec' or "
                         f"one of {', '.join(v.id for v in variants)}")
    rows = []
    for op in sorted({v.op for v in variants}):
        problem = bench_problem(op, ns.scale)
        acc = acceptance_for(problem)
        args, kwargs = problem.spec_args()
        spec_t = statistics.median(time_call(lambda: getattr(specs, op)(*args, **kwargs), ns.repeat))
        rows.append({"variant": f"{op}/spec", "median_s": spec_t, "status": "ok", "case": problem.descriptor()})
        for v in (x for x in variants if x.op == op):
            why = availability(v) or fits(v, problem)
            if why:
                rows.append({"variant": v.id, "median_s": None, "status": f"skipped: {why}"})
                continue
            params = v.default_params()
            with console.status(f"checking {v.id} on the bench problem (also its warm-up run)"):
                first = check_example(v, problem, params)
            if first.status != "pass":  # a wrong kernel's time is not a result
                rows.append({"variant": v.id, "median_s": None, "status": f"{first.status}: {first.message[:200]}"})
                continue
            shape, dtype = expected_output_layout(problem, v.writes, acc.expected)
            buf = np.full(shape, poison_value(dtype, acc.expected), dtype)
            problem.set_output(buf)
            try:
                with console.status(f"timing {v.id}"):
                    ts = time_call(lambda: v.run(problem, **params), ns.repeat, warmup=False)
            except Exception as e:
                rows.append({"variant": v.id, "median_s": None, "status": f"error: {type(e).__name__}: {e}"})
                continue
            rows.append({"variant": v.id, "median_s": statistics.median(ts), "min_s": min(ts), "status": "ok",
                         "params": params})
    base = {}
    for r in rows:
        op = r["variant"].split("/")[0]
        if (ns.baseline == "spec" and r["variant"] == f"{op}/spec") or r["variant"] == ns.baseline:
            base[op] = r["median_s"]
    t = Table(title=f"refconv bench ({ns.scale}, median of {ns.repeat}; ratio = baseline / variant)")
    for c in ("variant", "median", "speed-up vs " + ns.baseline, "status"):
        t.add_column(c)
    for r in rows:
        op = r["variant"].split("/")[0]
        m = r["median_s"]
        b = base.get(op)
        r["speedup"] = (b / m) if (m and b) else None
        t.add_row(r["variant"], f"{m * 1e3:.3f} ms" if m else "-",
                  f"{r['speedup']:.3g}×" if r["speedup"] else "-", r["status"])
    console.print(t)
    if ns.json:
        Path(ns.json).write_text(json.dumps({"scale": ns.scale, "repeat": ns.repeat, "baseline": ns.baseline,
                                             "rows": rows}, indent=1, default=str))
    if ns.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ok = [r for r in rows if r["median_s"]]
        fig, ax = plt.subplots(figsize=(8, max(2, 0.3 * len(ok))))
        ax.barh([r["variant"] for r in ok], [r["median_s"] * 1e3 for r in ok])
        ax.set_xlabel("median time (ms)")
        ax.set_xscale("log")
        fig.tight_layout()
        fig.savefig(ns.plot, dpi=100)
    return 0
