"""Catch rate of the checker per bug class: each wrong implementation of tests/meta/wrong_impls.py
is checked through the checker's own draws (``ci`` profile) under several seeds.

    .venv/bin/python scripts/catch_rates.py [--seeds 8] [--examples 200] [--tolerance proven] [--json out.json]

Two numbers per class: ``per_run``, the fraction of seeded ``ci`` runs (25 examples, no shrinking)
that report the variant as failing; ``per_example``, the fraction of single drawn examples
(``--examples`` of them, four seeded Hypothesis runs that do not stop at a failure) on which it
fails.  Run it on another checkout's code with ``PYTHONPATH`` to compare before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "meta"))


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
    ap.add_argument("--only", help="comma-separated bug classes")
    ap.add_argument("--json")
    ns = ap.parse_args(argv)
    os.environ["REFCONV_TOLERANCE"] = ns.tolerance
    from wrong_impls import BUGS
    from refconv.runner import check_variant
    out = {}
    for name, v in BUGS.items():
        if ns.only and name not in ns.only.split(","):
            continue
        t0 = time.perf_counter()
        caught = 0
        for s in range(ns.seeds):
            r = check_variant(v, "ci", seed=s, db="none", failures_dir=None, shrink=False)
            caught += r.status in ("fail", "error")
        bad = n = 0
        for s in range(4 if ns.examples else 0):       # Hypothesis's draws are not uniform: 4 seeds
            b, k = per_example(v, ns.examples // 4, 1000 + s)
            bad, n = bad + b, n + k
        out[name] = {"op": v.op, "per_run": f"{caught}/{ns.seeds}", "per_example": f"{bad}/{n}",
                     "seconds": round(time.perf_counter() - t0, 1)}
        print(f"{name:34s} {v.op:9s} runs caught {caught}/{ns.seeds}  examples failing {bad}/{n}  "
              f"({out[name]['seconds']}s)", flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
