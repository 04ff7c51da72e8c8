"""Where does the OpenCL conv2d twin's extra time go?  ``conv2d_best.cl`` built as CUDA runs as fast as
the Numba twin (lab/probes/gpu_conv_cuda_port_probe.py), so the gap is NVIDIA's OpenCL.  This times, by
the bench's method (``refconv.bench.rows.measure``: first use, L2 flush, profiling events) and with
the operands and launch of ``conv2d/opencl/best`` on the 1x1 presets, a matrix of rows that takes the
kernel apart:

* ``shipped``: the shipped ``gemm``;
* ``empty, __local`` / ``empty, no __local``: its body emptied (same signature and grid), with and
  without its ``__local`` stage buffers;
* ``trivial, 1 arg, same grid``: a fresh one-argument kernel over the same grid (the grid's cost);
* ``trivial, gemm's args, 1 item``: a fresh kernel with gemm's 23 arguments, one work-item (the
  arguments' cost);
* ``... same __local after flush``: after the flush, a kernel that uses as much ``__local`` memory
  runs, so that a shared-memory carveout change, if that is what costs, falls outside the interval;
* ``... first use warm / none``: the first-use step (``FIRST_USE``) as the whole launch run untimed
  once, or skipped.

Measured on an H100, 2026-11-27, with an earlier form of this script (the emptied body declared
only ``As``): 9.41 us (T3-B) and 12.85 (T3-C) for the empty body, against 3.1 for a one-work-item
empty kernel and 24.7 / 16.0 for the shipped kernel in the same run.  Prints one JSON line a row.
usage: python lab/probes/gpu_opencl_launch_probe.py [REPEAT]   (PROBE_TARGET=pocl: a dry run on the CPU;
PROBE_ONLY=args: the arguments' rows alone)"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
from refconv.session import configure_backends
configure_backends({"cuda": "gpu", "opencl": os.environ.get("PROBE_TARGET", "nvidia")})  # pocl: a dry run
import pyopencl as cl  # noqa: E402
import refconv.opencl as oc  # noqa: E402
from refconv.backends import conv2d_gemm as G  # noqa: E402
from refconv.backends.opencl import conv2d_best as cb  # noqa: E402
from refconv.bench import presets  # noqa: E402
from refconv.bench.rows import measure  # noqa: E402

REPEAT = int(sys.argv[1]) if len(sys.argv) > 1 else 30
bench = sys.modules[oc.timed.__module__]
read_flush = bench.flush
shipped_first_use = bench.FIRST_USE
src = cb.SRC
i = src.index("void gemm("); j = src.index("{", i); k = src.index("/* out[n, m, pixel]")
sig = src[i + len("void gemm"):j]
with_local = src[:j] + "{\n    __local T As[2][BK * BM];\n    __local T Bs[2][BK * BN];\n    if (get_local_id(0) == 9999) out[0] = As[0][0] + Bs[1][0];\n}\n\n" + src[k:]
no_local = src[:j] + "{\n    if (get_local_id(0) == 9999) out[0] = 1;\n}\n\n" + src[k:]
# the same argument list as gemm (T from the build options), body empty: a fresh kernel
trivial_args = src[:src.index("__kernel", max(0, i - 200))] + "__kernel void trivial" + sig + "{\n    if (get_global_id(0) == 99999999) out[0] = 1;\n}\n"
TRIVIAL1 = "__kernel void trivial1(__global float *o) { if (get_global_id(0) == 99999999) o[0] = 1; }"
PRE = ("__kernel void pre(__local float *l, __global float *sink) { l[get_local_id(0)] = 0; "
       "barrier(CLK_LOCAL_MEM_FENCE); if (get_global_id(0) == 9999999) sink[0] = l[1]; }")


def flush_then_local(nbytes):
    def f(queue):
        read_flush(queue)
        kp = oc.kernel(PRE, "pre", (), "<pre>")
        kp(queue, (132 * 256,), (256,), cl.LocalMemory(nbytes), oc.scratch(8))
    return f


def row(pname, name, source, kname, options, gsize, lsize, args, out, flush=read_flush, first_use=shipped_first_use):
    kern = oc.kernel(source, kname, options, "<probe %s %d>" % (kname, hash(source)))

    def run():
        oc.launch(kern, gsize, lsize, *args, out=out)
    bench.flush, bench.FIRST_USE = flush, first_use
    try:
        run()
        m = measure(run, REPEAT, 128 << 20)
    finally:
        bench.flush, bench.FIRST_USE = read_flush, shipped_first_use
    print(json.dumps({"preset": pname, "kernel": name, "us": round(m["kernel_s"]["median"] * 1e6, 2),
                      "min": round(m["kernel_s"]["min"] * 1e6, 2)}), flush=True)


for pname in () if os.environ.get("PROBE_ONLY") == "args" else ("cuconv-T3-1x1-B", "cuconv-T3-1x1-C"):
    problem = presets.PRESETS[pname].problem()
    g = G.geometry(problem); p = G.plan(g); t = p.tile
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    prm = oc.to_device(np.array([*G.kernel_ints(g, p), has_bias, 1], np.int32))   # gemm's scalars
    out = np.zeros(g.M * g.NQ, np.float32)
    gsize, lsize = (p.grid[0] * t.thx, p.grid[1] * t.thy, p.split), (t.thx, t.thy, 1)
    lbytes = 2 * t.bk * (t.bm + t.bn) * 4
    opts = cb.options(np.dtype("float32"), t, p.one)
    gemm_args = (oc.to_device(a), oc.to_device(x), oc.to_device(ktab), oc.scratch(4), oc.OUT,
                 oc.to_device(bias), oc.scratch(4), prm)
    R = lambda name, s, kn="gemm", **kw: row(pname, name, s, kn, opts, gsize, lsize, gemm_args, out, **kw)
    R("shipped", src)
    R("empty, __local", with_local)
    R("empty, no __local", no_local)
    row(pname, "trivial, 1 arg, same grid", TRIVIAL1, "trivial1", (), gsize, lsize, (oc.OUT,), out)
    row(pname, "trivial, gemm's args, 1 item", trivial_args, "trivial", opts, (1, 1, 1), (1, 1, 1), gemm_args, out)
    R("trivial, gemm's args, same grid", trivial_args, "trivial")
    R("shipped, same __local after flush", src, flush=flush_then_local(lbytes))
    R("empty, __local, same __local after flush", with_local, flush=flush_then_local(lbytes))
    R("shipped, first use warm", src, first_use="warm")
    R("shipped, first use none", src, first_use=None)
    R("empty, no __local, first use none", no_local, first_use=None)
    R("shipped again", src)

# the arguments' cost: one work-item kernels with k buffer arguments (distinct or one buffer k times)
# and with one buffer and 16 int arguments (H100, 2026-11-27: gemm's 23 arguments, 7 of them
# buffers, cost 3.5 us on one work-item where one buffer cost nothing)
def args_row(name, kname, src, args):
    kern = oc.kernel(src, kname, (), "<probe args %s>" % kname)

    def run():
        oc.launch(kern, (1,), (1,), *args)
    run()
    m = measure(run, REPEAT, 128 << 20)
    print(json.dumps({"preset": "-", "kernel": name, "us": round(m["kernel_s"]["median"] * 1e6, 2),
                      "min": round(m["kernel_s"]["min"] * 1e6, 2)}), flush=True)


bufs = [oc.scratch(1 << 16) for _ in range(8)]
for k in (1, 2, 4, 7):
    params = ", ".join(f"__global float *b{i}" for i in range(k))
    src_k = f"__kernel void nb{k}({params}) {{ if (get_global_id(0) == 99999999) b0[0] = 1; }}"
    args_row(f"1 item, {k} distinct buffers", f"nb{k}", src_k, bufs[:k])
    if k > 1:
        args_row(f"1 item, one buffer {k} times", f"nb{k}", src_k, [bufs[0]] * k)
ints_src = ("__kernel void ni(__global float *b0, " + ", ".join(f"const int i{i}" for i in range(16))
            + ") { if (get_global_id(0) == 99999999) b0[0] = i0 + i15; }")
args_row("1 item, 1 buffer and 16 ints", "ni", ints_src, [bufs[0]] + [np.int32(i) for i in range(16)])
for n in (2, 4, 8):
    src_n = ("__kernel void ni%d(__global float *b0, " % n + ", ".join(f"const int i{i}" for i in range(n))
             + ") { if (get_global_id(0) == 99999999) b0[0] = i0; }")
    args_row(f"1 item, 1 buffer and {n} ints", f"ni{n}", src_n, [bufs[0]] + [np.int32(i) for i in range(n)])
args_row("1 item, 1 buffer and one int16", "nv", "__kernel void nv(__global float *b0, const int16 p) "
         "{ if (get_global_id(0) == 99999999) b0[0] = p.s0 + p.sf; }", [bufs[0], np.arange(16, dtype=np.int32).view(cl.cltypes.int16)[0]])
args_row("1 item, 1 buffer and a __constant int[16]", "nc", "__kernel void nc(__global float *b0, __constant int *p) "
         "{ if (get_global_id(0) == 99999999) b0[0] = p[0] + p[15]; }", [bufs[0], oc.to_device(np.arange(16, dtype=np.int32))])
