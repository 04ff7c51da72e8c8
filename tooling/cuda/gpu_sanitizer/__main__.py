"""The child process of the GPU sanitizer run: ``python -m
refconv.tooling.cuda.gpu_sanitizer --variant ID --where gpu|sim --examples N --seed S``.

Runs ``N`` examples of one variant, drawn by the checker's own strategy (``ci`` profile) with a
fixed seed, every one to the end (no stop at a failure), each between the markers of
:mod:`._parse` on stdout.  ``--where gpu``: on the GPU, plain (the parent runs this process under
compute-sanitizer), every ``cuda.jit`` kernel compiled with ``lineinfo=True`` so that the tool
names source lines.  ``--where sim``: under the simulator with refconv's sanitizer, whose
findings come back in the result lines.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys

from ._parse import CASE_MARK, RESULT_MARK, UNAVAILABLE_MARK


def _lineinfo_by_default(cuda) -> None:
    """Make ``cuda.jit`` compile with ``lineinfo=True`` unless told otherwise (numba-cuda's
    default is off, and compute-sanitizer then names only a SASS offset)."""
    jit = cuda.jit
    if getattr(jit, "_refconv_lineinfo", False):
        return

    @functools.wraps(jit)
    def with_lineinfo(*args, **kwargs):
        if not kwargs.get("debug"):
            kwargs.setdefault("lineinfo", True)
        return jit(*args, **kwargs)

    with_lineinfo._refconv_lineinfo = True
    cuda.jit = with_lineinfo


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m refconv.tooling.cuda.gpu_sanitizer")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--where", choices=("gpu", "sim"), required=True)
    ap.add_argument("--examples", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args(argv)

    from refconv import registry
    from refconv.session import Session
    Session(options={"cuda": ns.where, "sanitize": False if ns.where == "gpu" else "auto"}).configure()
    if ns.where == "gpu":
        from .. import _env
        _lineinfo_by_default(_env.cuda())
    variant = registry.get(ns.variant)
    why = variant.available()
    if why:                              # e.g. a GPU-only kernel under the simulator
        print(UNAVAILABLE_MARK + json.dumps(str(why)), flush=True)
        return 0

    from hypothesis import HealthCheck, given, reject, seed as hseed, settings
    from refconv.case import Case
    from refconv.checking import InvalidProblem, check_example
    from refconv.strategies import cases

    @hseed(ns.seed)
    @settings(max_examples=ns.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(variant, "ci"))
    def one(case):
        problem, params = case
        line = str(Case(problem, params))
        print(CASE_MARK + json.dumps(line), flush=True)
        try:
            r = check_example(variant, problem, params)
        except InvalidProblem:
            print(RESULT_MARK + json.dumps({"status": "invalid"}), flush=True)
            reject()
        print(RESULT_MARK + json.dumps({"status": r.status, "message": (r.message or "")[:400],
                                        "findings": r.findings}, default=str), flush=True)

    one()
    return 0


if __name__ == "__main__":
    sys.exit(main())
