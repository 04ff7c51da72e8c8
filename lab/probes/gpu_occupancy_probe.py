"""How many work-groups / blocks does an SM run at once, by __local / shared memory a group, on
NVIDIA's OpenCL and on CUDA (CuPy, the driver's default carveout)?  Each group of 256 work-items
declares ``L`` bytes of local memory (touched, so it is kept) and spins until the GPU's global timer
has advanced ``SPIN_NS`` since the group started; ``16 * SMS`` groups are launched, and the
concurrency is ``groups * SPIN_NS / (time * SMS)``.  A suspect of issue #24: the OpenCL conv2d twin
is 1.4x slower than Numba's on the 1x1 presets whose grids need two blocks of 33 KiB an SM, with
the same main loop.  Prints one JSON line a (backend, L) and writes them to $OUT/occupancy.json.
usage: python lab/probes/gpu_occupancy_probe.py"""
from __future__ import annotations

import json
import os

import numpy as np

SMS, THREADS, SPIN_NS = 132, 256, 20000
LOCALS = (0, 8192, 16384, 24576, 32768, 33792, 40960, 49152)

CL = r"""
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void spin(__global uint *out, const ulong ns)
{
    __local uint buf[LWORDS];
    ulong t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    buf[get_local_id(0) % LWORDS] = (uint)t0;
    barrier(CLK_LOCAL_MEM_FENCE);
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
    if (get_local_id(0) == 0) out[get_group_id(0)] = buf[(get_group_id(0) * 7) % LWORDS];
}
"""

CU = r"""
extern "C" __global__ void __launch_bounds__(256) spin(unsigned *out, unsigned long long ns)
{
    __shared__ unsigned buf[LWORDS];
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    buf[threadIdx.x % LWORDS] = (unsigned)t0;
    __syncthreads();
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
    if (threadIdx.x == 0) out[blockIdx.x] = buf[(blockIdx.x * 7) % LWORDS];
}
"""


def opencl_time(lbytes: int, groups: int) -> float:
    import pyopencl as cl
    ctx = cl.Context([d for p in cl.get_platforms() for d in p.get_devices() if "NVIDIA" in p.name][:1])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    k = cl.Program(ctx, CL).build(options=[f"-DLWORDS={max(lbytes // 4, 1)}"]).spin
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * groups)
    k(q, (groups * THREADS,), (THREADS,), out, np.uint64(SPIN_NS)).wait()
    ts = []
    for _ in range(5):
        ev = k(q, (groups * THREADS,), (THREADS,), out, np.uint64(SPIN_NS))
        ev.wait()
        ts.append((ev.profile.end - ev.profile.start) * 1e-9)
    return float(np.median(ts))


def cuda_time(lbytes: int, groups: int) -> float:
    import cupy as cp
    k = cp.RawModule(code=CU, options=(f"-DLWORDS={max(lbytes // 4, 1)}",)).get_function("spin")
    out = cp.zeros(groups, cp.uint32)
    k((groups,), (THREADS,), (out, np.uint64(SPIN_NS)))
    ts = []
    for _ in range(5):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        k((groups,), (THREADS,), (out, np.uint64(SPIN_NS)))
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) * 1e-3)
    return float(np.median(ts))


rows = []
groups = 16 * SMS       # twice what 2048 threads an SM can hold at once: the limit shows
for lbytes in LOCALS:
    for name, fn in (("opencl", opencl_time), ("cuda", cuda_time)):
        try:
            t = fn(lbytes, groups)
            row = {"backend": name, "local_bytes": lbytes, "time_us": round(t * 1e6, 1),
                   "groups_per_sm": round(groups * SPIN_NS * 1e-9 / (t * SMS), 2)}
        except Exception as e:  # noqa: BLE001 - a size the runtime refuses is a result too
            row = {"backend": name, "local_bytes": lbytes, "error": f"{type(e).__name__}: {str(e)[:200]}"}
        rows.append(row)
        print(json.dumps(row), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "occupancy.json"), "w"), indent=1)
