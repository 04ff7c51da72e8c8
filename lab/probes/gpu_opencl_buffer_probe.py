"""OpenCL conv2d best on T3-B/T3-C: buffer lifetimes x first-use modes (the bench's method).

NVIDIA's OpenCL can charge a buffer's first use by a kernel to that kernel's profiling interval.
This probe times the kernel through ``refconv.opencl.launch`` (the bench's timed path: flush, then
the profiled launch) after one of three first-use steps of its own, passed as an argument and run
untimed before each launch: ``None`` (nothing), ``"touch"`` (a one-work-item kernel reads a byte of
every input buffer) or ``"warm"`` (the kernel itself once, its output into a scratch buffer).

usage: [PROBE_TARGET=pocl] python lab/probes/gpu_opencl_buffer_probe.py [REPEAT]   (default 30)"""
import json
import os
import sys

import numpy as np

from refconv.session import configure_backends

configure_backends({"cuda": "gpu", "opencl": os.environ.get("PROBE_TARGET", "nvidia")})
import pyopencl as cl  # noqa: E402

import refconv.opencl as oc  # noqa: E402
from refconv.backends import conv2d_gemm as G  # noqa: E402
from refconv.backends.opencl import conv2d_best as cb  # noqa: E402
from refconv.bench import presets  # noqa: E402
from refconv.bench.rows import measure  # noqa: E402

REPEAT = int(sys.argv[1]) if len(sys.argv) > 1 else 30
MODES = (None, "touch", "warm")


def touch_kernel(n: int):
    params = ", ".join(f"__global const uchar *b{i}" for i in range(n))
    acc = " ^ ".join(f"b{i}[0]" for i in range(n))
    src = f"__kernel void touch_args({params}, __global uchar *sink)\n{{ if (get_global_id(0) == 0) sink[0] = {acc}; }}\n"
    return oc.kernel(src, "touch_args", (), "<probe first use>")


def first_use(mode, launch_args, ins):
    """The untimed step before a timed launch: ``mode`` None, "touch" or "warm"."""
    e = oc.env()
    if mode == "warm":
        kern, gsize, lsize, args = launch_args
        kern(e.queue, gsize, lsize, *args).wait()
    elif mode == "touch":
        touch_kernel(len(ins))(e.queue, (1,), (1,), *ins, SINK).wait()
    elif mode is not None:
        raise ValueError(f"first-use mode {mode!r} not accepted; accepted: None, 'touch', 'warm'")


SINK = oc.scratch(8)
for pname in ("cuconv-T3-1x1-B", "cuconv-T3-1x1-C"):
    problem = presets.PRESETS[pname].problem()
    g = G.geometry(problem); p = G.plan(g); t = p.tile
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    prm = oc.to_device(np.array([*G.kernel_ints(g, p), has_bias, 1], np.int32))   # gemm's scalars
    out = np.zeros(g.M * g.NQ, np.float32)
    gsize, lsize = (p.grid[0] * t.thx, p.grid[1] * t.thy, p.split), (t.thx, t.thy, 1)
    kern = oc.kernel(cb.SRC, "gemm", cb.options(np.dtype("float32"), t, p.one), "<buf probe>")
    hosts = (a, x, ktab, bias)
    pers = [oc.to_device(h) for h in hosts]
    s1, s2 = oc.scratch(4), oc.scratch(4)
    pout = oc.scratch(out.nbytes)
    e = oc.env()

    def args(ins, o):
        return (ins[0], ins[1], ins[2], s1, o, ins[3], s2, prm)

    def timed(mode, ins, o=oc.OUT):
        first_use(mode, (kern, gsize, lsize, args(ins, pout)), ins)
        if o is oc.OUT:
            oc.launch(kern, gsize, lsize, *args(ins, oc.OUT), out=out)
        else:
            oc.launch(kern, gsize, lsize, *args(ins, o))
            cl.enqueue_copy(e.queue, out, o).wait()

    def fresh(mode):
        timed(mode, [oc.to_device(h) for h in hosts])

    def persistent(mode):
        timed(mode, pers)

    def rewrite(wait):
        def f(mode):
            for b, h in zip(pers, hosts):
                ev = cl.enqueue_copy(e.queue, b, np.ascontiguousarray(h), is_blocking=False)
            if wait:
                ev.wait()
            timed(mode, pers)
        return f

    def all_persistent(mode):
        timed(mode, pers, pout)

    rows = [("fresh", fresh), ("persistent", persistent), ("rewritten", rewrite(False)),
            ("rewritten+wait", rewrite(True)), ("persistent, out too", all_persistent)]
    for mode in MODES:
        for name, fn in rows:
            run = (lambda fn, mode: lambda: fn(mode))(fn, mode)
            run()
            m = measure(run, REPEAT, 128 << 20)
            k = m["kernel_s"]
            print(json.dumps({"preset": pname, "buffers": name, "first_use": mode,
                              "us": round(k["median"] * 1e6, 2), "q1": round(k["q1"] * 1e6, 2) if "q1" in k else None,
                              "min": round(k["min"] * 1e6, 2)}), flush=True)
