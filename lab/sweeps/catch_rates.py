"""Catch rate of the checker per bug class: each wrong implementation of tests/meta/wrong_impls.py
(``BUGS``), and each hazard implementation of every ``tests/meta/hazard_impls*.py`` that exists
(``HAZARDS``, the same shape: name -> Variant), is checked through the checker's own directed
cases and draws (``ci`` profile, no flags) under several seeds.

    .venv/bin/python lab/sweeps/catch_rates.py [--seeds 8] [--examples 200] [--tolerance proven] [--json out.json]
                                            [--only 'NAME,triton_*']

Two numbers per class: ``per_run``, the fraction of seeded ``ci`` runs (the directed cases, then
25 examples, no shrinking) that report the variant as failing (``directed``: the directed case
that caught it in the first run, if one did); ``per_example``, the fraction of single drawn examples
(``--examples`` of them, four seeded Hypothesis runs that do not stop at a failure) on which it
fails.  Run it on another checkout's code with ``PYTHONPATH`` to compare before and after.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
META = ROOT / "tests" / "meta"
sys.path.insert(0, str(META))


def hazard_impls() -> dict:
    """name -> Variant from every ``tests/meta/hazard_impls*.py`` that defines ``HAZARDS`` (none
    may exist; a module that fails to import is reported and left out, never fatal)."""
    import importlib
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    out = {}
    for path in sorted(META.glob("hazard_impls*.py")):
        mod = None
        for name in (f"tests.meta.{path.stem}", path.stem):   # package-relative imports first
            try:
                mod = importlib.import_module(name)
                break
            except Exception as e:                               # noqa: BLE001 - report and go on
                err = f"{type(e).__name__}: {e}"
        if mod is None:
            print(f"{path.name}: not imported ({err}); its hazards are left out", file=sys.stderr)
            continue
        hazards = getattr(mod, "HAZARDS", None)
        if not isinstance(hazards, dict):
            print(f"{path.name}: defines no HAZARDS dict; left out", file=sys.stderr)
            continue
        for name, v in hazards.items():
            out[name if name not in out else f"{path.stem}.{name}"] = v
    return out


def per_example(variant, n, seed):
    from hypothesis import HealthCheck, given, reject, seed as hseed, settings
    from refconv.checking import InvalidProblem, check_example
    from refconv.strategies import cases
    seen = {"n": 0, "bad": 0}

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(variant, "ci"))
    def run(case):
        problem, params = case
        try:
            r = check_example(variant, problem, params)
        except InvalidProblem:
            reject()
        seen["n"] += 1
        seen["bad"] += r.status != "pass"

    run()
    return seen["bad"], seen["n"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--tolerance", default="proven")
    ap.add_argument("--only", help="comma-separated bug classes or globs of them (e.g. 'triton_*')")
    ap.add_argument("--json")
    ns = ap.parse_args(argv)
    os.environ["REFCONV_TOLERANCE"] = ns.tolerance
    from wrong_impls import BUGS
    from refconv.runner import check_variant
    from refconv.session import Session
    Session().configure()    # the backends as a plain `refconv check` has them (the simulator sanitizer on)
    out = {}
    for name, v in {**BUGS, **hazard_impls()}.items():
        if ns.only and not any(fnmatch.fnmatchcase(name, pat) for pat in ns.only.split(",")):
            continue
        t0 = time.perf_counter()
        caught, directed = 0, ""
        for s in range(ns.seeds):
            r = check_variant(v, "ci", seed=s, db="none", failures_dir=None, shrink=False)
            caught += r.status in ("fail", "error")
            if s == 0:
                directed = r.failed_case
        bad = n = 0
        for s in range(4 if ns.examples else 0):       # Hypothesis's draws are not uniform: 4 seeds
            b, k = per_example(v, ns.examples // 4, 1000 + s)
            bad, n = bad + b, n + k
        out[name] = {"op": v.op, "per_run": f"{caught}/{ns.seeds}", "per_example": f"{bad}/{n}",
                     "directed": directed, "seconds": round(time.perf_counter() - t0, 1)}
        print(f"{name:34s} {v.op:9s} runs caught {caught}/{ns.seeds}  examples failing {bad}/{n}  "
              f"directed case {directed or '-'}  ({out[name]['seconds']}s)", flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
