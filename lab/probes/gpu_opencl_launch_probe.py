"""Where does the OpenCL conv2d twin's extra time go?  ``conv2d_best.cl`` built as CUDA runs as fast as
the Numba twin (lab/probes/gpu_conv_cuda_port_probe.py), so the gap is NVIDIA's OpenCL.  This times, with
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
* ``... first use warm``: the whole launch run once, untimed, before each timed one.

The rows of the matrix are timed by this probe's own copy of the bench's OpenCL method, with the
step before each launch passed as an argument: a reading flush of 128 MiB (as the bench's), then
the row's own step (the ``__local`` kernel, the warm launch), then the kernel, its profiling
interval the time; the buffers are made once and kept, as the bench's timed runs keep theirs.
The arguments' rows go through ``refconv.opencl.launch`` and ``refconv.bench.rows.measure``.
Prints one JSON line a row; results of earlier runs are in lab/runs/ (2026-11-27d-h100,
2026-11-27e-h100).
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
FLUSH_BYTES = 128 << 20
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
FLUSH = ("__kernel void flush_read(__global const ulong *b, const ulong n, __global ulong *sink) {"
         " ulong acc = 0; for (ulong w = get_global_id(0); w < n; w += get_global_size(0)) acc ^= b[w];"
         " if (acc == 0x9E3779B97F4A7C15UL) sink[0] = acc; }")
FLUSH_BUF, SINK = oc.scratch(FLUSH_BYTES), oc.scratch(8)


def read_flush(queue):
    """The bench's cold L2: read FLUSH_BYTES of device memory (a grid-stride xor)."""
    kf = oc.kernel(FLUSH, "flush_read", (), "<probe flush>")
    kf(queue, (4096 * 256,), (256,), FLUSH_BUF, np.uint64(FLUSH_BYTES // 8), SINK)


def local_after_flush(nbytes):
    """A step after the flush: a kernel using ``nbytes`` of ``__local`` memory on every SM."""
    def step(queue, launch):
        kp = oc.kernel(PRE, "pre", (), "<pre>")
        kp(queue, (132 * 256,), (256,), cl.LocalMemory(nbytes), SINK)
    return step


def warm(queue, launch):
    """A step after the flush: the timed launch itself, once, untimed."""
    launch(queue).wait()


def timed(launch, step=None):
    """Median and minimum (µs) of ``launch``'s profiling interval over REPEAT runs, each after the
    reading flush and ``step(queue, launch)`` (None: nothing more)."""
    queue = oc.env().queue
    launch(queue).wait()                  # built and warmed, outside the runs
    times = []
    for _ in range(REPEAT):
        read_flush(queue)
        if step is not None:
            step(queue, launch)
        ev = launch(queue)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-3)
    return float(np.median(times)), min(times)


def row(pname, name, source, kname, options, gsize, lsize, args, step=None):
    kern = oc.kernel(source, kname, options, "<probe %s %d>" % (kname, hash(source)))
    us, lo = timed(lambda q: kern(q, gsize, lsize, *args), step)
    print(json.dumps({"preset": pname, "kernel": name, "us": round(us, 2), "min": round(lo, 2)}), flush=True)


for pname in () if os.environ.get("PROBE_ONLY") == "args" else ("cuconv-T3-1x1-B", "cuconv-T3-1x1-C"):
    problem = presets.PRESETS[pname].problem()
    g = G.geometry(problem); p = G.plan(g); t = p.tile
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    prm = oc.to_device(np.array([*G.kernel_ints(g, p), has_bias, 1], np.int32))   # gemm's scalars
    gsize, lsize = (p.grid[0] * t.thx, p.grid[1] * t.thy, p.split), (t.thx, t.thy, 1)
    lbytes = 2 * t.bk * (t.bm + t.bn) * 4
    opts = cb.options(np.dtype("float32"), t, p.one)
    out = oc.scratch(g.M * g.NQ * 4)
    gemm_args = (oc.to_device(a), oc.to_device(x), oc.to_device(ktab), oc.scratch(4), out,
                 oc.to_device(bias), oc.scratch(4), prm)
    R = lambda name, s, kn="gemm", **kw: row(pname, name, s, kn, opts, gsize, lsize, gemm_args, **kw)
    R("shipped", src)
    R("empty, __local", with_local)
    R("empty, no __local", no_local)
    row(pname, "trivial, 1 arg, same grid", TRIVIAL1, "trivial1", (), gsize, lsize, (out,))
    row(pname, "trivial, gemm's args, 1 item", trivial_args, "trivial", opts, (1, 1, 1), (1, 1, 1), gemm_args)
    R("trivial, gemm's args, same grid", trivial_args, "trivial")
    R("shipped, same __local after flush", src, step=local_after_flush(lbytes))
    R("empty, __local, same __local after flush", with_local, step=local_after_flush(lbytes))
    R("shipped, first use warm", src, step=warm)
    R("empty, no __local, first use warm", no_local, step=warm)
    R("shipped again", src)

# the arguments' cost: one work-item kernels with k buffer arguments (distinct or one buffer k times)
# and with one buffer and n int arguments, through the bench's timed path
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
