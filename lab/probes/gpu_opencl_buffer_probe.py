"""OpenCL conv2d best on T3-B/T3-C: buffer lifetimes x first-use modes (the bench's method)."""
import json, os, sys
import numpy as np
from refconv.session import configure_backends
configure_backends({"cuda": "gpu", "opencl": os.environ.get("PROBE_TARGET", "nvidia")})
import pyopencl as cl
import refconv.opencl as oc
from refconv.backends import conv2d_gemm as G
from refconv.backends.opencl import conv2d_best as cb
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv import timing
bench = sys.modules[oc.timed.__module__]
env = bench._platform.env
REPEAT = int(sys.argv[1]) if len(sys.argv) > 1 else 30
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
    e = env()
    def args(ins, o):
        return (ins[0], ins[1], ins[2], s1, o, ins[3], s2, prm)
    def fresh():
        oc.launch(kern, gsize, lsize, *args([oc.to_device(h) for h in hosts], oc.OUT), out=out)
    def persistent():
        oc.launch(kern, gsize, lsize, *args(pers, oc.OUT), out=out)
    def rewrite(wait):
        def f():
            for b, h in zip(pers, hosts):
                ev = cl.enqueue_copy(e.queue, b, np.ascontiguousarray(h), is_blocking=False)
            if wait:
                ev.wait()
            oc.launch(kern, gsize, lsize, *args(pers, oc.OUT), out=out)
        return f
    def all_persistent():
        oc.launch(kern, gsize, lsize, *args(pers, pout))
        cl.enqueue_copy(e.queue, out, pout).wait()
    rows = [("fresh", fresh), ("persistent", persistent), ("rewritten", rewrite(False)),
            ("rewritten+wait", rewrite(True)), ("persistent, out too", all_persistent)]
    for fu in (None, "touch", "warm"):
        for name, fn in rows:
            bench.FIRST_USE = fu
            fn()
            m = measure(fn, REPEAT, 128 << 20)
            print(json.dumps({"preset": pname, "buffers": name, "first_use": fu,
                              "us": round(m["kernel_s"]["median"] * 1e6, 2), "q1": round(m["kernel_s"]["q1"] * 1e6, 2) if "q1" in m["kernel_s"] else None,
                              "min": round(m["kernel_s"]["min"] * 1e6, 2)}), flush=True)
    bench.FIRST_USE = "touch"
