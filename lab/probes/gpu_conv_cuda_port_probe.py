"""Is the OpenCL conv2d twin slower for its source or for NVIDIA's OpenCL?  The very
``backends/opencl/conv2d_best.cl`` is compiled a second time as CUDA C (CuPy/NVRTC, a few macros
for the OpenCL builtins) and launched with the plan and operands ``conv2d/opencl/best`` uses
(``refconv.backends.conv2d_gemm``), checked against the spec, then timed with CUDA events after an L2
flush (median of 30, µs) beside the two twins timed by the bench's method.  Prints one JSON line a
(preset, row) and writes them to $OUT/cuda_port.json.
usage: [PORT_PRESETS=cuconv-T3-1x1-B,...] python lab/probes/gpu_conv_cuda_port_probe.py"""
from __future__ import annotations

import json
import os
from pathlib import Path

import cupy as cp
import numpy as np

from refconv import registry
from refconv.backends import conv2d_gemm as G
from refconv.bench import presets
from refconv.bench.rows import measure
from refconv.checking import acceptance_for, scratch_output
from refconv.session import configure_backends

from gpu_proto_probe import timed        # noqa: E402 - lab/probes/ is on the path when run as a script

configure_backends({"cuda": "gpu", "opencl": "nvidia"})

PRELUDE = r"""
typedef unsigned int uint;
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __constant
#define restrict __restrict__
#define inline __device__ inline
#define CLK_LOCAL_MEM_FENCE 0
#define barrier(f) __syncthreads()
__device__ __forceinline__ int get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
__device__ __forceinline__ int get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
__device__ __forceinline__ int get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
__device__ __forceinline__ int get_global_id(int d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
"""


def cuda_source() -> str:
    src = (Path(registry.get("conv2d/opencl/best").run.__code__.co_filename).parent / "conv2d_best.cl").read_text()
    src = src.replace("#pragma OPENCL FP_CONTRACT ON", "").replace("__local T *", "T *")   # CUDA: no space on pointers
    src = src.replace("__attribute__((reqd_work_group_size(THX, THY, 1)))", "__launch_bounds__(THX * THY)")
    return PRELUDE + src


def run_port(problem, flush):
    g = G.geometry(problem)
    p = G.plan(g)
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    t = p.tile
    opts = (f"-DBM={t.bm}", f"-DBN={t.bn}", f"-DTM={t.tm}", f"-DTN={t.tn}", f"-DBK={t.bk}",
            f"-DONE={int(p.one)}")
    k = cp.RawModule(code=cuda_source(), options=opts).get_function("gemm")
    d = [cp.asarray(v) for v in (a, x, ktab)]
    exp = acceptance_for(problem)
    out = cp.zeros(exp.expected.size, np.float32)
    part = cp.zeros(max(G.partial_elements(g, p), 1), np.float32)
    prm = cp.asarray(np.array([*G.kernel_ints(g, p), has_bias, int(p.split == 1)], np.int32))
    args = (*d, part, out, cp.asarray(bias), cp.zeros(1, np.int32), prm)   # the scalars: one int buffer, as OpenCL's
    if p.split != 1:
        raise SystemExit(f"{problem}: split {p.split}: the port probe times split-1 plans only")
    go = lambda: k(p.grid, (t.thx, t.thy, 1), args)  # noqa: E731
    go()
    v = exp.check(out.get().reshape(exp.expected.shape))
    med, mn = timed(go, flush)            # the prototypes' timing: L2 flush, CUDA events, median of 30
    return {"plan": G.describe(p), "ok": bool(v.ok), "regs": k.num_regs, "us": round(med, 2), "us_min": round(mn, 2)}


rows = []
flush = cp.empty(128 << 20, np.uint8)
for pname in os.environ.get("PORT_PRESETS", "cuconv-T3-1x1-B,cuconv-T3-1x1-C").split(","):
    problem = presets.PRESETS[pname].problem()
    rows.append({"preset": pname, "row": "opencl source as CUDA (plain events)", **run_port(problem, flush)})
    print(json.dumps(rows[-1]), flush=True)
    for vid in ("conv2d/numba_cuda/best", "conv2d/opencl/best"):
        v = registry.get(vid)
        out = scratch_output(problem, v.writes, v.output)
        v.run(problem, out)
        m = measure(lambda: v.run(problem, out), 30, 128 << 20)
        rows.append({"preset": pname, "row": vid + " (bench method)", "us": round(m["kernel_s"]["median"] * 1e6, 2),
                     "us_min": round(m["kernel_s"]["min"] * 1e6, 2)})
        print(json.dumps(rows[-1]), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "cuda_port.json"), "w"), indent=1)
