"""Does the bench's stream hold (tooling/cuda/_common._Hold) see the host's release?
Times hold -> host sleep -> release -> synchronize: about the sleep when it works, the hold's
poll limit (tens of ms) when the device cannot see the mapped word.  It checks a private
mechanism of the CUDA kit, so it reaches it directly; it changes none of its settings.

usage: python lab/probes/hold_probe.py   (on a GPU)"""
import time

from refconv.pool import configure_backends

configure_backends({"cuda": "gpu"})
from refconv.tooling.cuda import _common  # noqa: E402
import refconv.cuda as kit  # noqa: E402

cuda = kit.cuda()
h = _common._hold()
for sleep in (0.0, 0.001, 0.005):
    for _ in range(3):
        t0 = time.perf_counter()
        tok = h.hold()
        time.sleep(sleep)
        h.release(tok)
        cuda.synchronize()
        print(f"host sleep {sleep * 1e3:.1f} ms: hold released after {(time.perf_counter() - t0) * 1e3:.2f} ms", flush=True)
