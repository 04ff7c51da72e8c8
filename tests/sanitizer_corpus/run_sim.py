"""Run the CUDA corpus (or shipped numba_cuda variants) under the CUDA simulator, with or without
the refconv sanitizer, and print one JSON object.  Used by tests/test_sanitizer.py (in a
subprocess, so that the simulator is on whatever the test process imported) and for the cost
measurements in docs/sanitizer.md.

    python tests/sanitizer_corpus/run_sim.py corpus [--plain] [--repeat N] [CASE ...]
    python tests/sanitizer_corpus/run_sim.py variants [--plain] [--repeat N] [--per-variant K] [GLOB]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _clean(f):
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in f.items()}


def corpus(args):
    import numpy as np
    from refconv import findings
    from sanitizer_corpus import cuda_kernels as ck
    out = {}
    names = args.names or list(ck.CASES)
    for name in names:
        run = ck.CASES[name][0]
        times = []
        for _ in range(args.repeat):
            with findings.collect() as fs:
                t0 = time.perf_counter()
                err = None
                try:
                    got, exp = run()
                    ok = bool(np.array_equal(got, exp))
                except Exception as e:  # a kernel that crashes the simulator
                    ok, err = False, f"{type(e).__name__}: {e}"
                times.append(time.perf_counter() - t0)
        out[name] = {"ok": ok, "error": err, "seconds": times, "findings": [_clean(f) for f in fs]}
    return out


def variants(args):
    from refconv import findings, registry
    from refconv.variant import run_variant
    from refconv.tooling.cuda.compile_check import specialisations
    from refconv.checking import acceptance_for, expected_output_layout, poison_value
    import numpy as np
    from refconv.problem import Problem
    out = {}
    for v in registry.variants(backend="numba_cuda", name=args.glob):
        if v.available() is not None:
            continue
        specs = specialisations(v)
        if not specs:
            continue
        pick = [specs[0], specs[len(specs) // 2], specs[-1]][: args.per_variant]
        rec = out.setdefault(v.id, {"runs": []})
        for params, desc in pick:
            times = []
            for _ in range(args.repeat):
                p = Problem.parse(desc)
                exp = acceptance_for(p).expected
                shape, dtype = expected_output_layout(p, v.writes, exp)
                buf = np.empty(shape, dtype)
                buf[...] = poison_value(dtype, exp)
                dst = buf
                if v.output == "rows":
                    from refconv.sink import RowSink
                    dst = RowSink(shape, dtype, lambda r0, block: None)
                with findings.collect() as fs:
                    t0 = time.perf_counter()
                    err = None
                    try:
                        run_variant(v, p, dst, params)
                    except Exception as e:
                        err = f"{type(e).__name__}: {e}"
                    times.append(time.perf_counter() - t0)
            rec["runs"].append({"params": params, "problem": desc, "seconds": times, "error": err,
                                "findings": [_clean(f) for f in fs]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("corpus", "variants"))
    ap.add_argument("--plain", action="store_true", help="no sanitizer")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--per-variant", type=int, default=2)
    ap.add_argument("names", nargs="*")
    args = ap.parse_intermixed_args()
    args.glob = args.names[0] if args.names else None
    if not args.plain:
        from refconv.tooling.cuda.sanitizer import enable
        enable()
        enable()  # idempotent
    res = corpus(args) if args.what == "corpus" else variants(args)
    json.dump(res, sys.stdout, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
