"""Where does the OpenCL conv2d twin's extra time go?  ``conv2d_best.cl`` built as CUDA runs as fast as
the Numba twin (scripts/gpu_conv_cuda_port_probe.py), so the gap is NVIDIA's OpenCL.  This times, by
the bench's method and with the operands and launch of ``conv2d/opencl/best`` on the 1x1 presets:
the ``gemm`` kernel with its body emptied (the same signature and grid; with its ``__local`` stage
buffers, and without), the shipped kernel, and both after a kernel that uses as much ``__local``
memory has run behind the flush (so that a shared-memory carveout change, if that is what costs,
happens before the timed interval).  Measured on an H100, 2026-11-27, with an earlier form of
this script whose empty body declared only the ``As`` stage buffer: 9.41 us (T3-B) and 12.85
(T3-C), against 3.1 for a one-work-item empty kernel and 24.7 / 16.0 for the shipped kernel in the
same run; the other rows have not run yet (the session's device time was spent).  Prints one JSON line a row.
usage: python scripts/gpu_opencl_launch_probe.py"""
from __future__ import annotations

import json
import sys

import numpy as np
from refconv.session import configure_backends
configure_backends({"cuda": "gpu", "opencl": "nvidia"})
import pyopencl as cl  # noqa: E402
import refconv.opencl as oc  # noqa: E402
from refconv.backends import conv2d_gemm as G  # noqa: E402
from refconv.backends.opencl import conv2d_best as cb  # noqa: E402
from refconv.bench import presets  # noqa: E402
from refconv.bench.rows import measure  # noqa: E402
bench = sys.modules[oc.timed.__module__]
read_flush = bench.flush
src = cb.SRC
i = src.index("void gemm("); j = src.index("{", i); k = src.index("/* out[n, m, pixel]")
with_local = src[:j] + "{\n    __local T As[2][BK * BM];\n    __local T Bs[2][BK * BN];\n    if (get_local_id(0) == 9999) out[0] = As[0][0] + Bs[0][0];\n}\n\n" + src[k:]
no_local = src[:j] + "{\n    if (get_local_id(0) == 9999) out[0] = 1;\n}\n\n" + src[k:]
PRE = "__kernel void pre(__local float *l, __global float *sink) { l[get_local_id(0)] = 0; barrier(CLK_LOCAL_MEM_FENCE); if (get_global_id(0) == 9999999) sink[0] = l[1]; }"
def flush_then_local(nbytes):
    def f(queue):
        read_flush(queue)
        kp = oc.kernel(PRE, "pre", (), "<pre>")
        kp(queue, (132 * 256,), (256,), cl.LocalMemory(nbytes), oc.scratch(8))
    return f
for pname in ("cuconv-T3-1x1-B", "cuconv-T3-1x1-C"):
    problem = presets.PRESETS[pname].problem()
    g = G.geometry(problem); p = G.plan(g); t = p.tile
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    ints = [np.int32(v) for v in G.kernel_ints(g, p)]
    out = np.zeros(g.M * g.NQ, np.float32)
    gsize, lsize = (p.grid[0] * t.thx, p.grid[1] * t.thy, p.split), (t.thx, t.thy, 1)
    lbytes = 2 * t.bk * (t.bm + t.bn) * 4
    for name, s, fl in (("empty, __local", with_local, read_flush), ("empty, no __local", no_local, read_flush),
                        ("shipped", src, read_flush), ("shipped, a kernel with the same __local after the flush", src, flush_then_local(lbytes)),
                        ("empty, __local, same after flush", with_local, flush_then_local(lbytes))):
        kern = oc.kernel(s, "gemm", cb.options(np.dtype("float32"), t, p.one), "<probe %d>" % hash(s))
        def run():
            oc.launch(kern, gsize, lsize, oc.to_device(a), oc.to_device(x), oc.to_device(ktab), oc.scratch(4), oc.OUT,
                      oc.to_device(bias), oc.scratch(4), *ints, np.int32(has_bias), np.int32(1), out=out)
        bench.flush = fl
        try:
            run()
            m = measure(run, 30, 128 << 20)
        finally:
            bench.flush = read_flush
        print(json.dumps({"preset": pname, "kernel": name, "us": round(m["kernel_s"]["median"] * 1e6, 2), "min": round(m["kernel_s"]["min"] * 1e6, 2)}), flush=True)
