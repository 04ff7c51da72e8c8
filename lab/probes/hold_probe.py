"""Does the bench's stream hold (tooling/cuda/_common._Hold) see the host's release?
Times hold -> host sleep -> release -> synchronize: about the sleep when it works, the hold's
poll limit (tens of ms) when the device cannot see the mapped word."""
import time

from refconv.pool import configure_backends

configure_backends({"cuda": "gpu"})
from refconv.tooling.cuda import _common  # noqa: E402
from refconv.tooling.cuda import _env  # noqa: E402

cuda = _env.cuda()
h = _common._hold()
for sleep in (0.0, 0.001, 0.005):
    for _ in range(3):
        t0 = time.perf_counter()
        tok = h.hold()
        time.sleep(sleep)
        h.release(tok)
        cuda.synchronize()
        print(f"host sleep {sleep * 1e3:.1f} ms: hold released after {(time.perf_counter() - t0) * 1e3:.2f} ms", flush=True)

# Does the interval of a tiny kernel hold its launch overhead?  Per-launch interval (median of
# 200) with and without the hold, with and without the L2 flush.
import statistics  # noqa: E402

import numpy as np  # noqa: E402

from refconv import timing  # noqa: E402


@cuda.jit
def tiny(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


d = cuda.device_array(1 << 14, np.float64)
k = tiny[(1 << 14) // 256, 256]
k(d)
cuda.synchronize()
for limit in (_common._Hold.LIMIT, 0):
    h.LIMIT = limit
    for fb in (0, 128 << 20):
        with timing.collect(fb) as iv:
            for _ in range(200):
                _common.launch(k, d)
        per = iv.seconds()
        print(f"hold {'on ' if limit else 'off'} flush {fb >> 20:3d} MiB: interval of a tiny launch "
              f"median {statistics.median(per) * 1e6:.2f} µs, max {max(per) * 1e6:.2f} µs (200 launches)", flush=True)
h.LIMIT = _common._Hold.LIMIT
