"""Run one OpenCL corpus kernel (opencl_kernels.cl) through pyopencl on whatever platform the ICD
loader offers (the test points OCL_ICD_VENDORS at Oclgrind) and print a JSON line with the
result.  Oclgrind's diagnostics go to stderr; the caller reads them there.

    python run_opencl.py CASE
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N1, RED, TILE = 64, 128, 16


def launch(ctx, q, prg, case):
    import pyopencl as cl
    mf = cl.mem_flags

    def buf(a):
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)

    f32 = np.float32
    if case == "neg_local_index":
        a = (np.arange(N1) % 7 + 1).astype(f32); out = np.zeros(N1, f32)
        args, g, l, extra = [a, out], (N1,), (N1,), []
        exp = a - np.concatenate([[0], a[:-1]]).astype(f32)
    elif case == "global_oob":
        n = 40; a = np.arange(n, dtype=f32); out = np.zeros(n, f32)
        args, g, l, extra = [a, out], (64,), (32,), []
        exp = a * 2
    elif case == "tile_missing_barrier":
        a = np.arange(2 * TILE * TILE, dtype=f32).reshape(TILE, 2 * TILE); out = np.zeros((2 * TILE, TILE), f32)
        args, g, l, extra = [a, out], (2 * TILE, TILE), (TILE, TILE), []
        exp = a.T.copy()
    elif case == "warp_reduce_no_barrier":
        a = (np.arange(2 * RED) % 5).astype(f32); out = np.zeros(2, f32)
        args, g, l, extra = [a, out], (2 * RED,), (RED,), []
        exp = a.reshape(2, RED).sum(1)
    elif case in ("early_return_sum", "clean_reduce"):
        n = RED + 40; a = np.ones(n, f32) if case == "early_return_sum" else (np.arange(n) % 3).astype(f32)
        out = np.zeros(2, f32)
        args, g, l, extra = [a, out], (2 * RED,), (RED,), [np.int32(n)]
        exp = np.array([a[:RED].sum(), a[RED:].sum()], f32)
    elif case == "fused_partial_stage":
        n = N1 + 40; a = (np.arange(n) % 9).astype(f32); out = np.zeros(n, f32)
        args, g, l, extra = [a, out], (2 * N1,), (N1,), [np.int32(n)]
        p = np.concatenate([[0], a, [0]]); exp = (p[:-2] + p[1:-1] + p[2:]).astype(f32)
    elif case == "uninit_local":
        a = (np.arange(N1) + 1).astype(f32); out = np.zeros(N1, f32)
        args, g, l, extra = [a, out], (N1,), (N1,), []
        exp = a
    else:
        raise KeyError(case)
    bufs = [buf(x) for x in args]
    getattr(prg, case)(q, g, l, *bufs, *extra)
    cl.enqueue_copy(q, args[1], bufs[1])
    q.finish()
    return args[1], exp


def main():
    import pyopencl as cl
    case = sys.argv[1]
    plat = cl.get_platforms()[0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    src = open(os.path.join(HERE, "opencl_kernels.cl")).read()
    prg = cl.Program(ctx, src).build()
    got, exp = launch(ctx, q, prg, case)
    print(json.dumps({"case": case, "platform": plat.name, "ok": bool(np.array_equal(got, exp))}), flush=True)


if __name__ == "__main__":
    main()
