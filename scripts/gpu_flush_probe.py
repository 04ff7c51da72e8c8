"""Does the L2 flush's kind change a kernel's measured time?  Times a few variants on their bench
presets by the bench's method (``refconv.bench.rows.measure``) under three flushes: ``read`` (the
shipped one: a grid-stride read, clean L2), ``read+copy`` (the read, then an 8-byte device copy, so
the timed kernel follows a copy command, as it did before) and ``copy`` (the old write-based flush:
a 128 MiB buffer-to-buffer copy, dirty L2).  Used on a lent GPU (issue #24); prints one JSON line a
row and writes them all to $OUT/flush_probe.json (a device call returns only the tail of stdout).
usage: python scripts/gpu_flush_probe.py"""
from __future__ import annotations

import json
import os
import sys

from refconv import registry
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import check_example, acceptance_for
from refconv.session import configure_backends

configure_backends({"cuda": "gpu", "opencl": "nvidia"})
import refconv.opencl as oc  # noqa: E402
import refconv.cuda as rc  # noqa: E402

cl_bench = sys.modules[oc.timed.__module__]
CASES = [("sobel-4096x3072", "sobel/opencl/smem_rows2"), ("sobel-4096x3072", "sobel/opencl/best_R8"),
         ("filter2d-u8-3x3-3072", "filter2d/opencl/CM_CF8"), ("sobel-4096x3072", "sobel/numba_cuda/best_R8"),
         ("sobel-4096x3072", "sobel/numba_cuda/gmem")]


def cl_copy_flush(queue, extra_only=False):
    import pyopencl as cl
    from refconv import timing
    n = timing.flush_bytes()
    if n <= 0:
        return
    e = cl_bench._platform.env()
    bufs = getattr(cl_copy_flush, "bufs", None)
    if bufs is None:
        bufs = cl_copy_flush.bufs = (cl_bench.scratch(e, n), cl_bench.scratch(e, n))
    cl.enqueue_copy(queue, bufs[1], bufs[0], byte_count=8 if extra_only else n)


read_flush = cl_bench.flush
modes = {
    "read": read_flush,
    "read+copy": lambda q: (read_flush(q), cl_copy_flush(q, extra_only=True)),
    "copy": cl_copy_flush,
}
rows = []
for pname, vid in CASES:
    problem = presets.PRESETS[pname].problem()
    v = registry.get(vid)
    p = v.default_params()
    kept: dict = {}
    r = check_example(v, problem, p, acceptance_for(problem), keep=kept)
    for mode, fn in modes.items():
        if vid.split("/")[1] != "opencl" and mode == "read+copy":
            continue
        cl_bench.flush = fn
        if mode == "copy" and vid.split("/")[1] == "numba_cuda":
            import numpy as np
            from refconv import timing
            import importlib
            mod = importlib.import_module("refconv.tooling.cuda._common")
            orig = mod.flush

            def copy_flush(stream=0, mod=mod):
                n = timing.flush_bytes()
                bufs = getattr(copy_flush, "bufs", None)
                if bufs is None:
                    cuda = rc.cuda()
                    bufs = copy_flush.bufs = (cuda.device_array(n, np.uint8), cuda.device_array(n, np.uint8))
                bufs[1].copy_to_device(bufs[0], stream=stream)
            mod.flush = copy_flush
        m = measure(lambda: v.run(problem, kept["out"], **p), 20, 128 << 20)
        if mode == "copy" and vid.split("/")[1] == "numba_cuda":
            mod.flush = orig
        rows.append({"variant": vid, "flush": mode, "check": r.status,
                     "kernel_us_median": m["kernel_s"]["median"] * 1e6})
        print(json.dumps(rows[-1]), flush=True)
        json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "flush_probe.json"), "w"), indent=1)
    cl_bench.flush = read_flush
