"""Check and time conv2d/{numba_cuda,opencl}/best over seed 004's ten cuconv presets (issue #24,
point 3) at the default launch parameters (tile and split ``auto``: the cost model of
refconv.backends.conv2d_gemm) and a few alternatives (each tile forced, split-K off), by refconv
bench's own method (``refconv.bench.rows.measure``: L2 flush, stream hold, device events), after
checking each configuration once against the spec.  Prints one JSON line per (preset, variant,
params), with the plan the parameters resolve to and the ratio to autotuned cuDNN float32 (TF32
off) on an H100; with an argument, also writes the rows as JSON there and a Markdown table
beside it (same name, .md).  Needs a CUDA GPU (``--cuda gpu``, ``--opencl nvidia``).

    python scripts/gpu_conv_best_sweep.py [out.json] [--preset GLOB] [--backend numba_cuda|opencl] [--reps N]
"""
from __future__ import annotations

import argparse
import fnmatch
import json

import numpy as np

from refconv import registry
from refconv.backends import conv2d_gemm as G
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import acceptance_for, check_example
from refconv.session import configure_backends

#: autotuned cuDNN float32 (TF32 off) on an H100, µs (issue #24); E4 not given
CUDNN_US = {"cuconv-T3-1x1-A": 66.5, "cuconv-T3-1x1-B": 24.8, "cuconv-T3-1x1-C": 7.8, "cuconv-T4-3x3-A": 67.2,
            "cuconv-T4-3x3-B": 117.0, "cuconv-T5-5x5-A": 53.3, "cuconv-E1": 24.6, "cuconv-E2": 43.0,
            "cuconv-E3": 55.1}
#: the launch parameters tried per preset: the defaults, each big tile forced (split auto), split-K off
ALTERNATIVES = ({}, {"tile": "128x64"}, {"tile": "64x64"}, {"tile": "32x32"}, {"split": 1})


def _args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--preset", default="cuconv-*")
    ap.add_argument("--backend", choices=("numba_cuda", "opencl"), action="append")
    ap.add_argument("--reps", type=int, default=30)
    return ap.parse_args()


def _row(pname, problem, acc, vid, params, reps):
    v = registry.get(vid)
    p = {**v.default_params(), **params}
    g = G.geometry(problem)
    plan = G.plan(g, p["tile"], p["split"], np.dtype(problem.dims["dtype"]).itemsize)
    row = {"preset": pname, "variant": vid, "params": p, "plan": G.describe(plan),
           "model_us": round(G.estimate_us(g, plan), 1)}
    why = v.constraint(problem, p)
    if why:
        return {**row, "check": "skip", "message": why}
    kept: dict = {}
    r = check_example(v, problem, p, acc, keep=kept)
    row["check"] = r.status
    if r.status != "pass":
        return {**row, "message": (r.message or "")[:300]}
    out = kept.get("out")
    m = measure(lambda: v.run(problem, out, **p), reps, 128 << 20)
    if m["kernel_s"]:
        row["kernel_us_median"] = m["kernel_s"]["median"] * 1e6
        row["kernel_us_min"] = m["kernel_s"]["min"] * 1e6
        if pname in CUDNN_US:
            row["x_cudnn"] = round(row["kernel_us_median"] / CUDNN_US[pname], 3)
    return row


def main():
    a = _args()
    configure_backends({"cuda": "gpu", "opencl": "nvidia"})
    backends = a.backend or ["numba_cuda", "opencl"]
    rows = []
    for pname, pre in presets.PRESETS.items():
        if not fnmatch.fnmatchcase(pname, a.preset):
            continue
        problem = pre.problem()
        acc = acceptance_for(problem)
        for b in backends:
            seen = set()
            for params in ALTERNATIVES:
                p = {"tile": "auto", "split": "auto", **params}
                plan = G.describe(G.plan(G.geometry(problem), p["tile"], p["split"]))
                if plan in seen:             # the same launch as an earlier row (e.g. split=1 chosen anyway)
                    continue
                seen.add(plan)
                row = _row(pname, problem, acc, f"conv2d/{b}/best", params, a.reps)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if a.out:
        json.dump(rows, open(a.out, "w"), indent=1)
        lines = ["| preset | variant | params | plan | check | median µs | min µs | x cuDNN |", "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            med = r.get("kernel_us_median")
            cells = ["", "", ""] if med is None else [f"{med:.1f}", f"{r['kernel_us_min']:.1f}", str(r.get("x_cudnn", ""))]
            lines.append("| " + " | ".join([r["preset"], r["variant"], str(r["params"]), r["plan"], r["check"], *cells]) + " |")
        open(a.out.rsplit(".", 1)[0] + ".md", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
