"""Is an OpenCL row's kernel time its kernel's alone?  OpenCL rows scatter more than the same
kernels' Numba twins (issue #24: sobel/opencl/best_R8 median 33.4 us, minimum 27.0, against numba's
27.3 / 26.6).  A suspect: the timed kernel is enqueued right behind the L2 flush kernel on the
in-order queue, and its profiling start may be taken before the flush has drained.  This times a
few OpenCL variants on their bench presets by the bench's method (``refconv.bench.rows.measure``)
several ways: ``shipped`` (the timed run's buffers are the previous run's allocations rewritten,
``REUSE_BUFFERS``, no first-use step, then the read flush), ``read+wait`` (as shipped, then the host
waits for the flush before the timed launch), ``no-flush`` (warm L2), ``warm-first`` (the timed
kernel launched once untimed first), ``touch`` (a one-work-item kernel reads a byte of each buffer
first), ``fresh+touch`` (fresh buffers and the touch: what shipped before the reuse), ``fresh``
(fresh buffers, no first-use step), with a Numba row for reference (shipped and no-flush).
Used on a lent GPU; prints one JSON line a row and writes them all to
$OUT/flush_probe.json.
usage: [FLUSH_CASES='PRESET=VARIANT_ID,...'] python lab/probes/gpu_flush_probe.py"""
from __future__ import annotations

import json
import os
import sys

from refconv import registry
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import scratch_output
from refconv.session import configure_backends

configure_backends({"cuda": "gpu", "opencl": "nvidia"})
import refconv.opencl as oc  # noqa: E402

cl_bench = sys.modules[oc.timed.__module__]
CASES = [("sobel-4096x3072", "sobel/opencl/best_R8"), ("sobel-4096x3072", "sobel/opencl/smem_rows2"),
         ("filter2d-u8-3x3-3072", "filter2d/opencl/best_R2"), ("sobel-4096x3072", "sobel/numba_cuda/best_R8")]
if os.environ.get("FLUSH_CASES"):   # FLUSH_CASES='PRESET=VARIANT_ID,...': other rows
    CASES = [tuple(c.split("=", 1)) for c in os.environ["FLUSH_CASES"].split(",")]

read_flush = cl_bench.flush


def read_and_wait(queue):
    read_flush(queue)
    queue.finish()


#: mode -> (flush, first use, reuse)
modes = {"shipped": (read_flush, None, True), "read+wait": (read_and_wait, None, True),
         "no-flush": (lambda queue: None, None, True), "warm-first": (read_flush, "warm", True),
         "touch": (read_flush, "touch", True), "fresh+touch": (read_flush, "touch", False),
         "fresh": (read_flush, None, False)}
rows = []
for pname, vid in CASES:
    problem = presets.PRESETS[pname].problem()
    v = registry.get(vid)
    p = v.default_params()
    out = scratch_output(problem, v.writes, v.output)
    for mode, (fn, first, reuse) in modes.items():
        if "numba" in vid and mode not in ("shipped", "no-flush"):
            continue
        cl_bench.flush, cl_bench.FIRST_USE, cl_bench.REUSE_BUFFERS = fn, first, reuse
        try:   # no-flush: numba's rows get no flush bytes (OpenCL's flush function is the no-op above)
            m = measure(lambda: v.run(problem, out, **p), 20, 0 if mode == "no-flush" else 128 << 20)
        finally:
            cl_bench.flush, cl_bench.FIRST_USE, cl_bench.REUSE_BUFFERS = read_flush, None, True
        k = m["kernel_s"]
        rows.append({"variant": vid, "mode": mode,
                     **{f"kernel_us_{q}": round(k[q] * 1e6, 2) for q in ("median", "q1", "q3", "min", "max")}})
        print(json.dumps(rows[-1]), flush=True)
        json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "flush_probe.json"), "w"), indent=1)
