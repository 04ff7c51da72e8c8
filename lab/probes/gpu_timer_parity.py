"""Do a Numba row and an OpenCL row that do the same work report the same kernel time?  Twin
kernels (``y[i] = x[i] + 1`` over ``n`` floats, one element a thread, 256 a block), launched through
each backend's own timed path (``refconv.cuda.launch``: stream hold and CUDA events;
``refconv.opencl.launch``: the bench's buffer handling and profiling events) and timed by the bench's method
(``refconv.bench.rows.measure``: L2 flush, medians), for n from one element (the launch alone) to
64 Mi elements (memory-bound, 512 MB moved).  The difference at n = 1 is each backend's fixed cost
in a row's kernel time; that at large n should vanish.  Used on a lent GPU; prints one JSON line a
row and writes them all to $OUT/timer_parity.json.
usage: [PARITY_N=1,1024] [PARITY_TARGETS=sim,pocl] python lab/probes/gpu_timer_parity.py"""
from __future__ import annotations

import json
import os

import numpy as np

from refconv.bench.rows import measure
from refconv.session import configure_backends

#: PARITY_TARGETS=sim,pocl: a smoke run on the simulator and PoCL (their times mean nothing)
_cu, _cl = os.environ.get("PARITY_TARGETS", "gpu,nvidia").split(",")
configure_backends({"cuda": _cu, "opencl": _cl})
from refconv import cuda as rc  # noqa: E402
import refconv.opencl as oc  # noqa: E402

CL = """__kernel void inc(__global const float *x, __global float *y, const uint n)
{ const size_t i = get_global_id(0); if (i < n) y[i] = x[i] + 1.0f; }"""

cuda = rc.cuda()


@cuda.jit
def inc(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = x[i] + np.float32(1)


rows = []
for n in [int(v) for v in os.environ.get("PARITY_N", "1,1024,65536,1048576,16777216,67108864").split(",")]:
    x = np.ones(n, np.float32)
    blocks = -(-n // 256)
    dx, dy = cuda.to_device(x), cuda.device_array(n, np.float32)
    k = oc.kernel(CL, "inc", (), "<timer parity>")
    cx, cy = oc.to_device(x), oc.scratch(4 * n)

    host_out = np.zeros(n, np.float32)

    def numba_run():
        rc.launch(inc[blocks, 256], dx, dy, np.int32(n))
        cuda.synchronize()

    def opencl_run():
        oc.launch(k, (blocks * 256,), (256,), cx, cy, np.uint32(n))

    def numba_fresh():     # as the variants do: the input copied and the output made on every run
        d_out, m = rc.to_device_poisoned(host_out)
        rc.launch(inc[blocks, 256], cuda.to_device(x), d_out, np.int32(n))
        cuda.synchronize()
        rc.from_device(d_out, m, host_out)

    def opencl_fresh():
        oc.launch(k, (blocks * 256,), (256,), oc.to_device(x), oc.OUT, np.uint32(n), out=host_out)

    def opencl_fresh_warm():   # fresh buffers, first used by an untimed launch, then the timed one
        e, xb = oc.env(), oc.to_device(x)
        with oc.output(host_out) as ob:
            k(e.queue, (blocks * 256,), (256,), xb, ob, np.uint32(n)).wait()
            oc.timed(k)(e.queue, (blocks * 256,), (256,), xb, ob, np.uint32(n))

    for name, buffers, run in (("numba_cuda", "reused", numba_run), ("opencl", "reused", opencl_run),
                               ("numba_cuda", "fresh", numba_fresh), ("opencl", "fresh", opencl_fresh),
                               ("opencl", "fresh, used once untimed", opencl_fresh_warm)):
        m = measure(run, 30, 128 << 20)
        q = m["kernel_s"]
        rows.append({"backend": name, "buffers": buffers, "n": n, "bytes": 8 * n,
                     **{f"kernel_us_{s}": round(q[s] * 1e6, 2) for s in ("median", "q1", "q3", "min")},
                     "caveats": m.get("caveats")})
        print(json.dumps(rows[-1]), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "timer_parity.json"), "w"), indent=1)
