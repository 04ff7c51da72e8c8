"""Check and time conv2d/{numba_cuda,opencl}/best over seed 004's ten cuconv presets (issue #24,
point 3) at the default launch parameters (tile, split, path and reduce ``auto``: the cost model
of refconv.backends.conv2d_gemm) and alternatives chosen per preset (:func:`alternatives`: the
earlier design, the table gather with the reduction kernel; the reduction kernel against the
fused one; tiles forced; on the 1x1 presets split-K 1/2/4/8 with the fused reduction; on the
others the 8x8 micro-tile ``128x128`` at split 2/4/8), by refconv bench's own method
(``refconv.bench.rows.measure``: L2 flush, stream hold, device events), after checking each
configuration once against the spec.  Prints one JSON line per (preset, variant, params), with
the plan the parameters resolve to (tile, split, ``1x1``/``gather``, ``fused``), the row's wall
time and the ratio to autotuned cuDNN float32 (TF32 off) of issue 24's closing run on an H100;
with an argument, also writes the rows as JSON there and a Markdown table beside it (same name,
.md).  Needs a CUDA GPU (``--cuda gpu``, ``--opencl nvidia``).

    python lab/sweeps/gpu_conv_best_sweep.py [out.json] [--preset GLOB ...] [--backend numba_cuda|opencl] [--reps N]
    python lab/sweeps/gpu_conv_best_sweep.py sweep.json --preset 'cuconv-T3-*' --preset cuconv-E3   # 1x1 + E3
    python lab/sweeps/gpu_conv_best_sweep.py deep.json --alts deep --preset 'cuconv-T3-*'            # deep-K tiles
    python lab/sweeps/gpu_conv_best_sweep.py shapes.json --alts shapes --preset 'cuconv-T3-*'        # block shapes
    python lab/sweeps/gpu_conv_best_sweep.py cand.json --alts candidates --preset 'cuconv-E[234]'    # capped / deep tiles
    python lab/sweeps/gpu_conv_best_sweep.py e4.json --preset cuconv-E4 --alt tile=128x128k16r128,split=4   # named rows
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import time

import numpy as np

from refconv import registry
from refconv.backends import conv2d_gemm as G
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import acceptance_for, check_example
from refconv.session import configure_backends

#: autotuned cuDNN float32 (TF32 off) on an H100, kernel medians, µs (issue 24's bench run with the
#: read flush, lab/runs/2026-11-27b-h100/bench_cuconv.json, 2026-11-27; E3 from the 25th's run, E4 not run)
CUDNN_US = {"cuconv-T3-1x1-A": 34.3, "cuconv-T3-1x1-B": 14.8, "cuconv-T3-1x1-C": 8.19, "cuconv-T4-3x3-A": 67.5,
            "cuconv-T4-3x3-B": 117.4, "cuconv-T5-5x5-A": 53.2, "cuconv-E1": 24.9, "cuconv-E2": 44.4,
            "cuconv-E3": 55.1}
#: the deep-K tiles (BK 32 / 64) that ``--alts deep`` times
DEEP = ("32x32k32", "32x32k64", "64x64k32", "32x32k64-2x4")
#: the block shapes with more threads that ``--alts shapes`` times beside ``32x32k64``
SHAPES = ("32x32k64", "32x32k64-2x2", "64x32k32", "32x64k32")


def shape_alternatives(g) -> list:
    """``--alts shapes``: the defaults, then each of :data:`SHAPES` at split 1 and 2."""
    return [{}] + [{"tile": t, "split": s} for t in SHAPES for s in (1, 2)]


#: ``--alts candidates``: the 16-deep K tiles (the 8x8 one capped at 128 registers) against the
#: 8-deep 128x64 and 128x128 tiles, each at the splits that give an H200's 132 SMs one or two waves
#: on cuconv E2-E4
CANDIDATES = (("128x64", (1, 2, 4)), ("128x128", (2, 4, 8)), ("128x64k16", (1, 2, 4)), ("128x128k16r128", (2, 4)))


def candidate_alternatives(g) -> list:
    """``--alts candidates``: the defaults, then each of :data:`CANDIDATES` at its splits."""
    return [{}] + [{"tile": t, "split": s} for t, splits in CANDIDATES for s in splits]


def deep_alternatives(g) -> list:
    """``--alts deep``: the defaults, then each deep-K tile at split 1 and 2 (reduction kernel; on
    1x1 problems also split 4), so that they can be compared with what ``auto`` picks."""
    splits = (1, 2, 4) if g.is_1x1 else (1, 2)
    return [{}] + [{"tile": t, "split": s} for t in DEEP for s in splits]


def alternatives(g) -> list:
    """The launch parameters tried on a problem of geometry ``g``: the defaults; the earlier design
    (table gather, reduction kernel); each reduction forced; tiles forced; 1x1 problems: split-K
    1, 2, 4, 8 (fused) and the 4x4 tiles; others: the 8x8 micro-tile at split 2, 4, 8 and the
    earlier 3x3 default (128x64, reduction kernel).  Rows resolving to the same plan run once."""
    alts = [{}, {"path": "gather", "reduce": "kernel"}, {"reduce": "kernel"}, {"reduce": "fused"}]
    if g.is_1x1:
        alts += [{"split": 1}] + [{"split": s, "reduce": "fused"} for s in (2, 4, 8)]
        alts += [{"tile": "32x32"}, {"tile": "64x64"}, {"tile": "32x32", "split": 4, "reduce": "fused"}]
    else:
        alts += [{"tile": "128x128", "split": s} for s in (2, 4, 8)] + [{"tile": "128x128"}]
        alts += [{"tile": "128x64"}, {"tile": "128x64", "reduce": "kernel"}, {"tile": "64x64"}]
    return alts


def _full(params: dict) -> dict:
    return {"tile": "auto", "split": "auto", "path": "auto", "reduce": "auto", **params}


def _alt(text: str) -> dict:
    """``--alt`` ``k=v,...`` as launch parameters (integers where the value is one)."""
    kv = dict(item.split("=", 1) for item in text.split(","))
    return {k: int(v) if v.isdigit() else v for k, v in kv.items()}


def _args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--preset", action="append", help="glob; again: a preset matching any (default cuconv-*)")
    ap.add_argument("--backend", choices=("numba_cuda", "opencl"), action="append")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--alts", choices=("all", "deep", "shapes", "candidates"), default="all",
                    help="the launch parameters tried: all (alternatives()), deep (deep_alternatives()) or shapes (shape_alternatives())")
    ap.add_argument("--alt", action="append", metavar="K=V,...",
                    help="launch parameters to time instead of --alts (e.g. tile=128x128k16r128,split=4); repeatable; "
                         "the defaults row is always first")
    return ap.parse_args()


def _row(pname, problem, acc, vid, params, reps):
    v = registry.get(vid)
    p = {**v.default_params(), **params}
    g = G.geometry(problem)
    plan = G.plan(g, p["tile"], p["split"], np.dtype(problem.dims["dtype"]).itemsize, p["path"], p["reduce"])
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
    globs = a.preset or ["cuconv-*"]
    for pname, pre in presets.PRESETS.items():
        if not any(fnmatch.fnmatchcase(pname, gl) for gl in globs):
            continue
        problem = pre.problem()
        acc = acceptance_for(problem)
        g = G.geometry(problem)
        for b in backends:
            seen = set()
            chosen = [{}] + [_alt(alt) for alt in a.alt] if a.alt else None
            for params in chosen or {"deep": deep_alternatives, "shapes": shape_alternatives, "candidates": candidate_alternatives}.get(a.alts, alternatives)(g):
                p = _full(params)
                plan = G.describe(G.plan(g, p["tile"], p["split"], 4, p["path"], p["reduce"]))
                if plan in seen:             # the same launch as an earlier row (e.g. split=1 chosen anyway)
                    continue
                seen.add(plan)
                t0 = time.perf_counter()
                row = _row(pname, problem, acc, f"conv2d/{b}/best", params, a.reps)
                row["row_s"] = round(time.perf_counter() - t0, 1)
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
