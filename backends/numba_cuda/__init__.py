"""refconv.backends.numba_cuda: the seed papers' CUDA kernels written with numba-cuda.

The same kernels run on a real GPU or under numba-cuda's simulator (``--cuda auto|gpu|sim``,
env ``REFCONV_CUDA``; ``auto`` picks the GPU when the driver reports one).  ``numba.cuda`` is
imported lazily, after the backends are configured, because ``NUMBA_ENABLE_CUDASIM`` must be set
before its first import.  The options, the mode, the poisoned device transfer, the simulator
scheduler, the sanitizer and the compile check are the numba-cuda kit's (:mod:`refconv.tooling.cuda`,
published for third-party plugins as :mod:`refconv.cuda`): this backend takes them through
``backend_fields()`` exactly as a plugin does.  Each variant module exposes
``variants() -> list[Variant]``.  See docs/backends.md, section numba_cuda.
"""
from __future__ import annotations

import importlib

from refconv import Backend
from refconv.tooling import cuda as kit

_MODULES = ("filter2d_paper", "filter2d_pmpp", "filter2d_best", "sobel", "sobel_best", "matvec", "kron", "conv2d", "conv2d_best")


def _variants():
    out = []
    for mod in _MODULES:
        out += importlib.import_module(f"{__name__}.{mod}").variants()
    return out


backend = Backend(name="numba_cuda", variants=_variants, **kit.backend_fields())
