"""Time the best_R{R} variants (and a few seed variants for reference) on the two roofline presets
over their launch parameters, by refconv bench's own method (``refconv.bench.rows.measure``: L2 flush, stream
hold, device events), after checking each configuration once against the spec.  Prints one line per
configuration and writes JSON to argv[1] and a Markdown table (kernel medians against issue 24's
targets) beside it (same name, .md).  Used by scripts/gpu_roofline_run.sh on a lent GPU."""
from __future__ import annotations

import fnmatch
import json
import os
import sys

import numpy as np

from refconv import registry
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import acceptance_for, check_example
from refconv.session import configure_backends

configure_backends({"cuda": "gpu", "opencl": "nvidia"})
#: (variant id, launch parameters[, build variant]): each best_R{R} at its defaults and at other
#: block widths, the conversion path (arith=cvt), OpenCL's trunc()-on-every-tap build (no inline
#: PTX add.rz: "trunc_all"), and the seed variants the issue compares with
CASES = {
    "filter2d-u8-3x3-3072": [
        *[(f"filter2d/{b}/best_R{r}", {}) for b in ("numba_cuda", "opencl") for r in (2, 4)],
        ("filter2d/numba_cuda/best_R2", {"bx": 32}), ("filter2d/numba_cuda/best_R2", {"bx": 128}),
        ("filter2d/numba_cuda/best_R4", {"bx": 256}),
        ("filter2d/opencl/best_R2", {"wg_x": 32}), ("filter2d/opencl/best_R2", {"wg_x": 128}),
        ("filter2d/opencl/best_R2", {}, "trunc_all"), ("filter2d/opencl/best_R4", {}, "trunc_all"),
        ("filter2d/numba_cuda/best_R4", {"arith": "cvt"}), ("filter2d/opencl/best_R4", {"arith": "cvt"}),
        ("filter2d/numba_cuda/CM_CF8", {}), ("filter2d/opencl/CM_CF8", {}),
    ],
    "sobel-4096x3072": [
        *[(f"sobel/{b}/best_R{r}", {}) for b in ("numba_cuda", "opencl") for r in (1, 2, 4, 8)],
        ("sobel/opencl/best_R8", {}, "gray_mul"), ("sobel/opencl/best_R4", {}, "gray_mul"),
        ("sobel/opencl/best_R8", {}, "no_ptx"), ("sobel/opencl/best_R4", {}, "no_ptx"),
        ("sobel/opencl/best_R8", {}, "no_ptx_gray_mul"),
        ("sobel/numba_cuda/best_R8", {"bx": 64}), ("sobel/opencl/best_R8", {"wg_x": 64}),
        ("sobel/numba_cuda/best_R8", {"bx": 256}), ("sobel/opencl/best_R8", {"wg_x": 256}),
        ("sobel/numba_cuda/gmem", {}), ("sobel/opencl/gmem", {}), ("sobel/opencl/smem_rows2", {}),
    ],
}


def _build(kind):
    """A context in which OpenCL's best kernels build as ``kind`` says (None: as shipped):
    ``trunc_all`` (filter2d: trunc() on every tap, no inline PTX), ``gray_mul`` (sobel: the gray
    products as subtract and multiply instead of one fma, ``-DGRAY_FMA=0``), ``no_ptx`` (sobel:
    the portable OpenCL C instead of the inline PTX), ``no_ptx_gray_mul`` (both)."""
    import contextlib
    from refconv.backends.opencl import filter2d_best as fb, sobel_best as sb
    mod = sb if kind in ("gray_mul", "no_ptx", "no_ptx_gray_mul") else fb

    @contextlib.contextmanager
    def ctx():
        orig = mod.options
        if kind == "trunc_all":
            fb.options = lambda *a: tuple(o for o in orig(*a) if o != "-DUSE_PTX") + ("-DTRUNC_ALL",)
        elif kind == "gray_mul":
            sb.options = lambda *a: orig(*a) + ("-DGRAY_FMA=0",)
        elif kind in ("no_ptx", "no_ptx_gray_mul"):     # the portable OpenCL C, as on PoCL
            extra = ("-DGRAY_FMA=0",) if kind == "no_ptx_gray_mul" else ()
            sb.options = lambda *a: tuple(o for o in orig(*a) if o != "-DUSE_PTX") + extra
        try:
            yield
        finally:
            mod.options = orig
    return ctx()


rows = []
#: SWEEP_PRESETS=name[,name]: only those presets (default: both); SWEEP_MATCH=pattern: only the
#: variant ids that match it (fnmatch, e.g. '*/numba_cuda/best_*')
only = [n for n in os.environ.get("SWEEP_PRESETS", "").split(",") if n]
match = os.environ.get("SWEEP_MATCH", "*")
for pname, cases in CASES.items():
    if only and pname not in only:
        continue
    problem = presets.PRESETS[pname].problem()
    acc = acceptance_for(problem)
    for vid, params, *build in cases:
        if not fnmatch.fnmatch(vid, match):
            continue
        v = registry.get(vid)
        build = build[0] if build else None
        p = {**v.default_params(), **params}
        kept: dict = {}
        with _build(build):
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
