"""refconv.backends.triton: Triton kernels for every op, compiled for a CUDA GPU or run by
Triton's interpreter on the CPU (``--triton auto|gpu|interpret``, env ``REFCONV_TRITON``), with
refconv's memory checker around every interpreted load and store.

The kit (:mod:`refconv.backends.triton.kit`: the mode, lazy kernels, the host-array wrapper,
launches with the poisoned output) and the memory checker (:mod:`.memcheck`) are what a
third-party Triton plugin uses too (docs/plugins.md, section Triton).  One module per op, each
with ``variants()``; the kernels themselves are in ``_kernels`` (imported at the first launch).
Importing this package never imports triton: without it the backend is listed as unavailable
with the reason.
"""
from __future__ import annotations

import importlib

from refconv.variant import Backend

from . import kit

_MODULES = ("filter2d", "sobel", "matvec", "kron", "conv2d")


def _variants():
    vs = []
    for mod in _MODULES:
        vs += importlib.import_module(f"{__name__}.{mod}").variants()
    return vs


def backend_fields() -> dict:
    """The ``Backend`` fields that make a Triton backend follow ``--triton``:
    ``Backend(name=..., variants=..., **refconv.backends.triton.backend_fields())``."""
    return {"available": kit.available, "options": (kit.OPTION,), "configure": kit.configure,
            "describe": kit.describe, "target": kit.target, "bench": kit.BENCH}


backend = Backend(name="triton", variants=_variants, **backend_fields())
