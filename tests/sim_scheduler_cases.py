"""Run by tests/test_sim_scheduler.py in a subprocess (the simulator must be on before numba.cuda
is imported).  Prints one JSON line: what each scenario produced under the scheduler named by
REFCONV_SIM_SCHEDULER (``event``: refconv's, ``numba``: the simulator's own)."""
import json
import os
import sys
import threading
import time

import numpy as np

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from refconv.tooling.cuda import sim_scheduler  # noqa: E402
from numba import cuda, float32, int32  # noqa: E402

installed = sim_scheduler.install()
T = 64


@cuda.jit
def tree_sum(x, out):
    s = cuda.shared.array(T, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * T + t]
    cuda.syncthreads()
    k = T // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def early_return(out):
    s = cuda.shared.array(8, int32)
    t = cuda.threadIdx.x
    s[t] = t
    if t >= 4:
        return
    cuda.syncthreads()
    out[t] = s[(t + 1) % 4]


@cuda.jit
def count_votes(out):
    out[cuda.blockIdx.x] = cuda.syncthreads_count(cuda.threadIdx.x % 3 == 0)


@cuda.jit
def raises_in_one_thread(x):
    if cuda.threadIdx.x == 5 and cuda.blockIdx.x == 1:
        x[10 ** 6] = 1
    cuda.syncthreads()


res = {"installed": installed}
x = np.arange(4 * T, dtype=np.float32)
out = np.zeros(4, np.float32)
tree_sum[4, T](x, out)
res["tree_sum"] = out.tolist()
res["tree_sum_expected"] = x.reshape(4, T).sum(axis=1).tolist()
o = np.full(4, -1, np.int32)
early_return[1, 8](o)
res["early_return"] = o.tolist()
v = np.zeros(3, np.int32)
count_votes[3, 10](v)
res["count"] = v.tolist()
try:
    raises_in_one_thread[2, 8](np.zeros(4, np.float32))
    res["raised"] = None
except Exception as e:
    res["raised"] = f"{type(e).__name__}: {e}"
out[:] = 0
tree_sum[4, T](x, out)  # the scheduler works again after a failed launch
res["after_error"] = out.tolist()
res["threads_alive"] = threading.active_count()


@cuda.jit
def warp_sum(x, out):
    v = x[cuda.threadIdx.x]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    out[cuda.threadIdx.x] = v


w = np.zeros(64, np.float32)
try:
    warp_sum[1, 64](x[:64], w)
    res["warp_sum"] = [float(w[0]), float(w[32])]
except Exception as e:
    res["warp_sum"] = f"{type(e).__name__}"
res["warp_sum_expected"] = [float(x[:32].sum()), float(x[32:64].sum())]
res["warps_supported"] = sim_scheduler.warps_supported()
from numba.cuda.simulator import kernelapi  # noqa: E402
sim_scheduler.uninstall()
res["shfl_after_uninstall"] = hasattr(kernelapi.FakeCUDAModule, "shfl_down_sync")
sim_scheduler.install()


@cuda.jit
def touch(x):
    x[cuda.threadIdx.x] = 1


for n in (1024, 1000, 990, 980, 970):  # 4964 threads over five block shapes
    y = np.zeros(n, np.int32)
    touch[1, n](y)
    assert y.all()
deadline = time.monotonic() + 10
while threading.active_count() > 2048 + 1 and time.monotonic() < deadline:
    time.sleep(0.05)  # evicted pools' threads are exiting
res["threads_after_many_shapes"] = threading.active_count()


@cuda.jit
def racy_shift(g, out):
    t = cuda.threadIdx.x
    g[t] = t
    # no barrier: a thread reads its neighbours' slots, written or not yet
    out[t] = g[(t + 1) % 64] + 100 * g[(t + 63) % 64]


runs = []
for _ in range(3):
    r = np.zeros(64, np.int32)
    racy_shift[1, 64](np.full(64, -1, np.int32), r)
    runs.append(r.tolist())
res["racy_runs"] = runs


@cuda.jit
def locked_sum(lock, total, x):
    t = cuda.threadIdx.x
    while cuda.atomic.cas(lock, 0, 0, 1) != 0:   # a spin lock: one thread at a time
        pass
    total[0] += x[t]
    cuda.atomic.exch(lock, 0, 0)


tot = np.zeros(1, np.float32)
locked_sum[1, 32](np.zeros(1, np.int32), tot, x[:32])
res["locked_sum"] = float(tot[0])
res["locked_sum_expected"] = float(x[:32].sum())


@cuda.jit(device=True)
def block_sum_step(buf, t, s):       # a device function that waits at a barrier inside the swap
    cuda.syncthreads()
    v = buf[t] + buf[t + s] if t < s else buf[t]
    cuda.syncthreads()
    buf[t] = v


@cuda.jit
def tree_sum_through_device_calls(x, out):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    s = 32
    while s > 0:
        block_sum_step(buf, t, s)
        s //= 2
    if t == 0:
        out[0] = buf[0]


o = np.zeros(1, np.float32)
tree_sum_through_device_calls[1, 64](x, o)
res["device_tree_sum"] = float(o[0])
res["device_tree_sum_expected"] = float(x[:64].sum())
res["cuda_restored_after_launch"] = globals()["cuda"] is sys.modules["numba.cuda"]
print(json.dumps(res))
