"""On a GPU: a peer and a variant are timed by one method.  The same copy kernel, launched once as a
variant would (``refconv.cuda.launch``: the numba_cuda stream hold, the L2 flush, device events)
and once as a torch peer's call (``refconv.peers``: the spin hold, the flush, torch's events), must
report the same kernel time within noise.  Skipped without a CUDA GPU and torch (CI has none; the
lent-GPU run is recorded in docs/performance.md)."""
import os

import numpy as np
import pytest

# the conftest turns the simulator on where the driver reports no GPU: skip before importing torch
if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    pytest.skip("needs a CUDA GPU (and torch with CUDA)", allow_module_level=True)
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and torch with CUDA)", allow_module_level=True)

from refconv import cuda as rcuda  # noqa: E402
from refconv import peers, timing  # noqa: E402
from refconv.bench.rows import measure  # noqa: E402

NBYTES = 64 << 20      # 64 MiB each way: ~45 us on an H100, far from launch-latency noise
FLUSH = 128 << 20


def _copy_kernel():
    cuda = rcuda.cuda()

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < src.size:
            dst[i] = src[i]
            i += stride
    return copy


def test_a_peer_and_a_variant_launching_the_same_kernel_report_the_same_time():
    rcuda.configure("gpu")
    cuda = rcuda.cuda()
    k = _copy_kernel()
    n = NBYTES // 4
    src_t = torch.ones(n, dtype=torch.float32, device="cuda")
    dst_t = torch.empty_like(src_t)
    src, dst = cuda.as_cuda_array(src_t), cuda.as_cuda_array(dst_t)
    grid, block = 132 * 8, 256
    configured = k[grid, block]
    configured(src, dst)
    cuda.synchronize()

    as_variant = lambda: rcuda.launch(configured, src, dst)          # noqa: E731
    as_peer = peers._gpu_timed("torch", lambda: configured(src, dst))
    with timing.collect(FLUSH):          # warm-up of both holds
        as_variant()
        as_peer()
    v = measure(as_variant, 40, FLUSH)
    p = measure(as_peer, 40, FLUSH)
    tv, tp = v["kernel_s"]["median"], p["kernel_s"]["median"]
    assert not v.get("caveats") and not p.get("caveats"), (v, p)
    assert abs(tv - tp) <= 0.05 * max(tv, tp) + 2e-6, (tv, tp)
    # and the IQR reflects the kernel, not the host's launch latency
    for m in (v, p):
        s = m["kernel_s"]
        assert s["q3"] - s["q1"] <= 0.1 * s["median"] + 2e-6, s
    assert np.isclose(float(dst_t[0]), 1.0)
