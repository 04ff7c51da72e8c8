"""refconv.backends.opencl: the OpenCL twin of the Numba CUDA backend.

One small host module per op (``filter2d``, ``sobel``, ``matvec``, ``kron``, ``conv2d``) over the
``.cl`` sources beside them, all written against the public OpenCL tooling
(:mod:`refconv.tooling.opencl`, re-exported as :mod:`refconv.opencl`) that third-party
pyopencl plugins use too.  Targets: ``pocl`` (default
without a GPU), ``oclgrind`` (checks every access, data races, barrier divergence; slow: use the
ci profile) and ``nvidia``; choose with ``--opencl`` or ``REFCONV_OPENCL``.

Every op module has ``variants()`` (the signature of every built-in backend's op modules): it
returns the op's variants, each available when ``tooling.available()`` is None and the device has
what it needs.
"""
from __future__ import annotations

from refconv.variant import Backend

from refconv.tooling import opencl as tooling

_MODULES = ("filter2d", "filter2d_best", "sobel", "sobel_best", "matvec", "kron", "conv2d", "conv2d_best")


def _variants():
    import importlib
    vs = []
    for mod in _MODULES:
        vs += importlib.import_module(f"{__name__}.{mod}").variants()
    return vs


backend = Backend(name="opencl", variants=_variants, **tooling.backend_fields())
