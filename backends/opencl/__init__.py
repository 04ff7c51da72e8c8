"""refconv.backends.opencl: the OpenCL twin of the Numba CUDA backend.

One small host module per op (``filter2d``, ``sobel``, ``matvec``, ``kron``, ``conv2d``) over the
``.cl`` sources beside them, and one runtime module (``_cl``: target selection, context and build
caches, Oclgrind diagnostics).  Targets: ``pocl`` (default without a GPU), ``oclgrind``
(checks every access, data races, barrier divergence; slow: use the ci profile) and ``nvidia``;
choose with ``--opencl`` or ``REFCONV_OPENCL``.
"""
from __future__ import annotations

from refconv.timing import BenchHooks
from refconv.variant import Backend, BackendOption

from . import _cl


def _variants():
    from . import conv2d, filter2d, kron, matvec, sobel
    vs = []
    for mod in (filter2d, sobel, matvec, kron, conv2d):
        vs += mod.variants()
    return vs


backend = Backend(
    name="opencl",
    variants=_variants,
    available=_cl.available,
    options=(BackendOption(
        flag="--opencl", dest="opencl", env="REFCONV_OPENCL", choices=_cl.CHOICES, default="auto",
        help="OpenCL target: auto (NVIDIA if present, else PoCL), pocl, oclgrind (simulator with "
             "race / bounds / barrier checks; slow, use the ci profile) or nvidia"),),
    configure=_cl.configure,
    describe=_cl.describe,
    target=_cl.target_info,
    bench=BenchHooks(copy=_cl.bench_copy, simulated=_cl.bench_simulated),
)
