"""refconv.backends.numba_cpu: the seeds' CPU algorithms, compiled with ``numba.njit``.

One module per op (``kron``, ``conv2d``, ``filter2d``, ``sobel``, ``matvec``); each exposes
``variants() -> list[Variant]``.  The modules are imported lazily by
``backend.variants()`` so ``refconv list`` does not pay for importing numba until needed.
Kernels are compiled on first use and kept in numba's on-disk cache (``_util.njit``); each takes
its modes as runtime flags so there is one compiled specialisation per input dtype, not one per
option combination.
"""
from __future__ import annotations

import importlib
import os

from refconv import Backend

NAME = "numba_cpu"
_MODULES = ("filter2d", "conv2d", "sobel", "matvec", "kron")


def _available():
    try:
        import numba  # noqa: F401
    except Exception as e:  # pragma: no cover - numba is a hard dependency of refconv
        return f"numba cannot be imported: {type(e).__name__}: {e}"
    return None


def _variants():
    out = []
    for mod in _MODULES:
        out.extend(importlib.import_module(f"{__name__}.{mod}").variants())
    return out


def _describe():
    try:
        import numba
        return f"numba {numba.__version__} njit on the host CPU"
    except Exception:
        return "numba njit on the host CPU (numba missing)"


def _target():
    from refconv.variant import Target
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # pragma: no cover
        mem = None
    return Target(name=f"host CPU ({os.cpu_count()} cores)", simulated=False, limits={"mem_bytes": mem})


backend = Backend(name=NAME, variants=_variants, available=_available, describe=_describe, target=_target,
                  env_prefixes=("NUMBA_",), versions=("numba",))
