"""``Backend.preflight`` for numba-cuda kernels (the built-in ``numba_cuda`` backend's, and any
numba-cuda plugin's through :func:`refconv.cuda.preflight`)."""
from __future__ import annotations

from . import _env


def preflight(variants, options):
    """The compile check under ``--compile`` (``options["compile"]``), and with ``--sanitize`` on
    a GPU the compute-sanitizer and simulator-sanitizer runs (``gpu_sanitizer``), their findings
    merged per variant id; ``{}`` otherwise."""
    variants = list(variants)
    out: dict = {}
    if (options or {}).get("compile"):
        from .compile_check import preflight as _pf
        out = _pf(variants, options)
    if _env.gpu_sanitizing():
        from .gpu_sanitizer import preflight as _gs
        for vid, found in _gs(variants, options).items():
            out[vid] = list(out.get(vid, [])) + found
    return out
