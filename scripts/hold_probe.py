"""Does the bench's stream hold (backends/numba_cuda/_common._Hold) see the host's release?
Times hold -> host sleep -> release -> synchronize: about the sleep when it works, the hold's
poll limit (tens of ms) when the device cannot see the mapped word."""
import time

from refconv.pool import configure_backends

configure_backends({"cuda": "gpu"})
from refconv.backends.numba_cuda import _common  # noqa: E402
from refconv.backends.numba_cuda import _env  # noqa: E402

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
