"""Per-launch device intervals of numba_cuda's kron block_launches kernel (one launch per element
of A) on a bench preset, with and without the stream hold, next to the same launches timed as one
back-to-back batch: does the interval hold the kernel alone?"""
import os
import statistics
import time

import numpy as np

from refconv.pool import configure_backends
from refconv.bench.presets import PRESETS

configure_backends({"cuda": "gpu"})
from refconv import timing  # noqa: E402
from refconv.tooling.cuda import _common, _env  # noqa: E402

cuda = _env.cuda()


@cuda.jit
def per_element(a, b, c, i, j, N, P, Q):
    # the P x Q block of A[i, j] into c (the kron block_launches variant's kernel, copied: scripts
    # import no backend module)
    k = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    l = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    aij = a[i * N + j]
    if k < P and l < Q:
        c[k * (N * Q) + j * Q + l] = aij * b[k * Q + l]


prob = PRESETS[os.environ.get("PRESET", "kron-160")].problem()
a, b = (np.ascontiguousarray(prob.inputs[x]) for x in "ab")
(M, N), (P, Q) = a.shape, b.shape
d_a, d_b = cuda.to_device(a.reshape(-1)), cuda.to_device(b.reshape(-1))
d_rb = cuda.device_array(P * N * Q, a.dtype)
grid = (-(-Q // 32), -(-P // 32))
k = per_element[grid, (32, 32)]
args = lambda j: (d_a, d_b, d_rb, 0, j % N, N, P, Q)  # noqa: E731
k(*args(0))
cuda.synchronize()
h = _common._hold()


def pct(xs):
    xs = sorted(xs)
    return " ".join(f"p{p} {xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1e6:.2f}" for p in (10, 50, 90, 99))


for limit in (_common._Hold.LIMIT, 0):
    h.LIMIT = limit
    t0 = time.perf_counter()
    with timing.collect(0) as iv:
        for j in range(400):
            _common.launch(k, *args(j))
    host = (time.perf_counter() - t0) / 400
    print(f"{prob.dims['n']}: hold {'on ' if limit else 'off'}: per-launch interval µs {pct(iv.seconds())}; "
          f"host {host * 1e6:.1f} µs per launch", flush=True)
h.LIMIT = _common._Hold.LIMIT
# 400 launches back to back between two events, issued while the stream is held
tok = h.hold()
s, e = cuda.event(), cuda.event()
s.record()
for j in range(400):
    k(*args(j))
e.record()
h.release(tok)
e.synchronize()
print(f"batch of 400 under one hold: {s.elapsed_time(e) * 1e3 / 400:.2f} µs per launch (the queue holds "
      f"{400} launches?)", flush=True)
t0 = time.perf_counter()
s.record()
for j in range(400):
    k(*args(j))
e.record()
e.synchronize()
print(f"batch of 400 without hold: {s.elapsed_time(e) * 1e3 / 400:.2f} µs per launch device, "
      f"{(time.perf_counter() - t0) * 1e6 / 400:.1f} µs host", flush=True)

# The variant as the bench runs it (every launch held), with the garbage collector left running
# inside the held windows (as before the fix) and without: mean interval per launch, and how many
# holds timed out (their intervals hold host time).
import gc  # noqa: E402

from refconv.checking import scratch_output  # noqa: E402
from refconv.registry import get  # noqa: E402
from refconv.variant import run_variant  # noqa: E402

v = get("kron/numba_cuda/block_launches")
out = scratch_output(prob, v.writes)
real_disable = gc.disable
for gc_in_hold in (True, False):
    gc.disable = (lambda: None) if gc_in_hold else real_disable
    with timing.collect(0) as iv:
        t0 = time.perf_counter()
        run_variant(v, prob, out, {})
        host = time.perf_counter() - t0
    secs = iv.seconds()
    print(f"block_launches, gc {'running' if gc_in_hold else 'off   '} in the held windows: {len(secs)} launches, "
          f"mean {statistics.mean(secs) * 1e6:.2f} µs, median {statistics.median(secs) * 1e6:.2f} µs, "
          f"max {max(secs) * 1e3:.2f} ms; run {host:.2f} s; caveats {iv.caveats()}", flush=True)
gc.disable = real_disable
