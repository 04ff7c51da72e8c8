"""Time the best_R{R} variants on the two roofline presets over row counts (also ones only this
script registers, ``EXTRA_ROWS``), block widths and register caps, by refconv bench's own method (``refconv.bench.rows.measure``: L2 flush, stream
hold, device events), after checking each configuration once against the spec.  Prints one line per
configuration and writes JSON to argv[1] and a Markdown table (kernel medians against issue 24's
targets) beside it (same name, .md).  Used by lab/runners/gpu_roofline_run.sh on a lent GPU.

filter2d's best kernels are made here from a build passed as an argument (``make_variant`` of a
``Build``: other row counts, a register cap).  The builds this sweep once also timed -- the two-lane
path's sign taps by a shift, a multiply high or both (``sign_*``), float columns (``fcols4``), the
weights as literals (``wlit``), OpenCL's trunc() on every tap (``trunc_all``) and its per-row test kept
where every band is complete (``exact0``) -- left the product: they live in git history at commit
0c317ca, and asked for here the sweep stops with that message."""
from __future__ import annotations

import dataclasses
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
#: row counts the sweep times besides the shipped ones (each best_R{R} is a variant of its own; the
#: extra ones exist only in this script, registered before the registry loads)
EXTRA_ROWS = {"filter2d": (3, 4, 6), "sobel": (3, 6)}


def _extra_rows():
    from refconv.backends.numba_cuda import sobel_best as ns
    from refconv.backends.opencl import sobel_best as os_
    for mod in (ns, os_):
        mod.ROWS = tuple(sorted(set(mod.ROWS) | set(EXTRA_ROWS["sobel"])))


_extra_rows()

#: (variant id, launch parameters[, build variant]): each best_R{R} at its defaults and at other
#: row counts, block widths and register caps (``maxregN``), and the seed variants the issue compares with
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


#: builds of filter2d's best kernels no longer in the product (see the module doc)
REMOVED = ("sign_hi", "sign_shift", "sign_mixed", "fcols4", "wlit", "trunc_all", "exact0")


def _variant(vid, kind):
    """The variant ``vid`` built as ``kind`` says: filter2d's best made from its design (the row count
    of the id; ``maxregN``: at most N registers a thread), every other one from the registry."""
    op, backend, name = vid.split("/")
    if kind in REMOVED:
        raise SystemExit(f"build {kind!r} of {vid} left the product; it lives in git history at commit 0c317ca")
    if op != "filter2d" or not name.startswith("best_R"):
        return registry.get(vid)
    if backend == "numba_cuda":
        from refconv.backends.numba_cuda import filter2d_best as fb
    else:
        from refconv.backends.opencl import filter2d_best as fb
    design = fb.Build(rows=int(name[len("best_R"):]))
    if kind and kind.startswith("maxreg"):
        design = dataclasses.replace(design, max_registers=int(kind[len("maxreg"):]))
    return fb.make_variant(design)


def _build(kind):
    """A context in which sobel's best kernels build as ``kind`` says (None: as shipped):
    ``gray_mul`` (OpenCL sobel:
    the gray products as subtract and multiply instead of one fma, ``-DGRAY_FMA=0``), ``no_ptx``
    (OpenCL sobel: the portable OpenCL C instead of the inline PTX), ``no_ptx_gray_mul`` (both),
    ``maxregN`` (at most N registers a thread: numba's ``max_registers``, NVIDIA OpenCL's
    ``-cl-nv-maxrregcount``; filter2d's through :func:`_variant`)."""
    import contextlib
    from refconv.backends.numba_cuda import sobel_best as nsb
    from refconv.backends.opencl import sobel_best as sb
    mods = (sb,)

    @contextlib.contextmanager
    def ctx():
        orig = {m: m.options for m in mods}
        if kind == "gray_mul":
            sb.options = lambda *a: orig[sb](*a) + ("-DGRAY_FMA=0",)
        elif kind in ("no_ptx", "no_ptx_gray_mul"):     # the portable OpenCL C, as on PoCL
            extra = ("-DGRAY_FMA=0",) if kind == "no_ptx_gray_mul" else ()
            sb.options = lambda *a: tuple(o for o in orig[sb](*a) if o != "-DUSE_PTX") + extra
        elif kind and kind.startswith("maxreg"):
            n = int(kind[len("maxreg"):])
            for m in mods:
                m.options = (lambda o: lambda *a: o(*a) + (f"-cl-nv-maxrregcount={n}",))(orig[m])
            nsb.MAX_REGISTERS = n
        elif kind:
            raise ValueError(f"build {kind!r} not accepted; accepted: gray_mul, no_ptx, no_ptx_gray_mul, maxregN")
        try:
            yield
        finally:
            for m in mods:
                m.options = orig[m]
            nsb.MAX_REGISTERS = None
    return ctx()


rows = []
#: SWEEP_PRESETS=name[,name]: only those presets (default: both); SWEEP_MATCH=pattern: only the
#: variant ids that match it (fnmatch, e.g. '*/numba_cuda/best_*')
only = [n for n in os.environ.get("SWEEP_PRESETS", "").split(",") if n]
match = os.environ.get("SWEEP_MATCH", "*")
#: SWEEP_BUILDS=shipped,fcols0,...: only the cases of those builds ("shipped": none) and without
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
