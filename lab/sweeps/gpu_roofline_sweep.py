"""Time the best_R{R} variants on the two roofline presets over row counts (also ones that do not
ship), block widths and register caps, by refconv bench's own method (``refconv.bench.rows.measure``:
L2 flush, stream hold, device events), after checking each configuration once against the spec.
Prints one line per configuration and writes JSON to argv[1] and a Markdown table (kernel medians
against issue 24's targets) beside it (same name, .md).  Used by lab/runners/gpu_roofline_run.sh on a
lent GPU.

filter2d's and sobel's best kernels are made here from a design passed as an argument
(``make_variant(Build(rows=R, max_registers=N))`` of their modules: any row count, a register cap);
nothing in the product is changed at run time.  The builds this sweep once also timed -- filter2d's
two-lane sign taps by a shift, a multiply high or both (``sign_*``), float columns (``fcols4``), the
weights as literals (``wlit``), OpenCL's trunc() on every tap (``trunc_all``) and its per-row test kept
where every band is complete (``exact0``); OpenCL sobel's gray products as a subtract and a multiply
(``gray_mul``, ``-DGRAY_FMA=0``) and its portable OpenCL C built for NVIDIA instead of the inline PTX
(``no_ptx``, ``no_ptx_gray_mul``; the portable C still ships, for the other targets) -- left the
product: they live in git history at commit 0c317ca, and asked for here the sweep stops with that
message."""
from __future__ import annotations

import fnmatch
import importlib
import json
import os
import sys

from refconv import registry
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import acceptance_for, check_example
from refconv.session import configure_backends

configure_backends({"cuda": "gpu", "opencl": "nvidia"})

#: (variant id, launch parameters[, build]): each best_R{R} at its defaults and at other row counts
#: (made from their design, :func:`_variant`), block widths and register caps (``maxregN``)
CASES = {
    "filter2d-u8-3x3-3072": [
        *[(f"filter2d/{b}/best_R{r}", {}) for b in ("numba_cuda", "opencl") for r in (2, 3, 4, 5, 6)],
        *[(f"filter2d/{b}/best_R{r}", {}, f"maxreg{n}") for b in ("numba_cuda", "opencl") for r in (2, 5)
          for n in (64, 56)],
        # arith=float: the float paths (the preset's weights take exact), as shipped before the two-lane path
        *[(f"filter2d/{b}/best_R{r}", {"arith": "float"}) for b in ("numba_cuda", "opencl") for r in (2, 4)],
        *[(f"filter2d/numba_cuda/best_R{r}", {"bx": bx}) for r in (2, 5) for bx in (32, 128)],
        *[(f"filter2d/opencl/best_R{r}", {"wg_x": wx}) for r in (2, 5) for wx in (32, 128)],
        ("filter2d/numba_cuda/best_R2", {"arith": "int"}),
    ],
    "sobel-4096x3072": [
        *[(f"sobel/{b}/best_R{r}", {}) for b in ("numba_cuda", "opencl") for r in (4, 6, 8)],
        *[(f"sobel/{b}/best_R8", {}, "maxreg64") for b in ("numba_cuda", "opencl")],
    ],
}


#: builds of filter2d's and sobel's best kernels no longer in the product (see the module doc)
REMOVED = ("sign_hi", "sign_shift", "sign_mixed", "fcols4", "wlit", "trunc_all", "exact0",
           "gray_mul", "no_ptx", "no_ptx_gray_mul")
#: the ops whose best_R{R} kernels this sweep makes from a design
DESIGNED = ("filter2d", "sobel")


def _variant(vid, kind):
    """The variant ``vid`` built as ``kind`` says (None: as shipped; ``maxregN``: at most N registers
    a thread, numba's ``max_registers`` and NVIDIA OpenCL's ``-cl-nv-maxrregcount``): filter2d's and
    sobel's best made by their module's ``make_variant`` from a ``Build`` of the id's row count, every
    other one from the registry (as shipped only)."""
    op, backend, name = vid.split("/")
    if kind in REMOVED:
        raise SystemExit(f"build {kind!r} of {vid} left the product; it lives in git history at commit 0c317ca")
    if kind and not (kind.startswith("maxreg") and kind[len("maxreg"):].isdigit()):
        raise SystemExit(f"build {kind!r} of {vid} not accepted; accepted: maxregN (at most N registers a thread)")
    if op not in DESIGNED or not name.startswith("best_R"):
        if kind:
            raise SystemExit(f"build {kind!r} of {vid}: only the best_R kernels of {', '.join(DESIGNED)} take a build")
        return registry.get(vid)
    mod = importlib.import_module(f"refconv.backends.{backend}.{op}_best")
    design = mod.Build(rows=int(name[len("best_R"):]), max_registers=int(kind[len("maxreg"):]) if kind else None)
    return mod.make_variant(design)


rows = []
#: SWEEP_PRESETS=name[,name]: only those presets (default: both); SWEEP_MATCH=pattern: only the
#: variant ids that match it (fnmatch, e.g. '*/numba_cuda/best_*')
only = [n for n in os.environ.get("SWEEP_PRESETS", "").split(",") if n]
match = os.environ.get("SWEEP_MATCH", "*")
#: SWEEP_BUILDS=shipped,maxreg64,...: only the cases of those builds ("shipped": none) and without
#: launch parameters of their own, and with "params" the shipped build's cases with launch
#: parameters of their own (default: every case)
builds = [b for b in os.environ.get("SWEEP_BUILDS", "").split(",") if b]
for pname, cases in CASES.items():
    if only and pname not in only:
        continue
    problem = presets.PRESETS[pname].problem()
    acc = acceptance_for(problem)
    for vid, params, *build in cases:
        if not fnmatch.fnmatch(vid, match):
            continue
        build = build[0] if build else None
        v = _variant(vid, build)
        if builds and not ((build or "shipped") in builds and not params
                           or "params" in builds and build is None and params):
            continue
        p = {**v.default_params(), **params}
        kept: dict = {}
        r = check_example(v, problem, p, acc, keep=kept)
        row = {"preset": pname, "variant": vid, "params": p, "build": build, "check": r.status}
        if r.status == "pass":
            out = kept.get("out")
            m = measure(lambda: v.run(problem, out, **p), 30, 128 << 20)
            row["kernel_us_median"] = m["kernel_s"]["median"] * 1e6 if m["kernel_s"] else None
            row["kernel_us_min"] = m["kernel_s"]["min"] * 1e6 if m["kernel_s"] else None
        else:
            row["message"] = r.message[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=1)

#: issue 24's kernel-time targets on the H100, µs
TARGET_US = {"filter2d-u8-3x3-3072": 12.6, "sobel-4096x3072": 28.0}
lines = ["| preset | variant | params | build | check | kernel median µs | min µs | vs target |",
         "|---|---|---|---|---|---|---|---|"]
for r in rows:
    med, t = r.get("kernel_us_median"), TARGET_US[r["preset"]]
    cells = ["", "", ""] if med is None else [f"{med:.1f}", f"{r['kernel_us_min']:.1f}", f"{med / t:.2f}x of {t} us"]
    lines.append("| " + " | ".join([r["preset"], r["variant"], str(r["params"]), r["build"] or "shipped", r["check"],
                                    *cells]) + " |")
open(sys.argv[1].rsplit(".", 1)[0] + ".md", "w").write("\n".join(lines) + "\n")
